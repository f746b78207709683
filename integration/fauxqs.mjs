// fauxqs.mjs starts the fauxqs SQS emulator for package integration's tests.
//
// Run it with the Node.js 22 that the npm package "node" installs
// (node_modules/.bin/node fauxqs.mjs); fauxqs 2.4.1 needs Node.js >= 22.5.
// It listens on 127.0.0.1 only (fauxqs's own CLI listens on every address),
// on the port in FAUXQS_PORT, or on a free port the kernel picks when that is
// unset or 0, and prints one line to stdout once it accepts connections:
//
//	fauxqs listening on http://127.0.0.1:PORT
//
// It exits on SIGTERM or SIGINT, and when its stdin closes, so a test process
// that dies without killing it does not leave it running. (Started by hand
// with stdin from /dev/null it therefore exits at once: run it from a
// terminal, or with `sleep infinity |` in front.)
import { buildApp } from "fauxqs";

const port = Number.parseInt(process.env.FAUXQS_PORT ?? "0", 10);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`fauxqs.mjs: FAUXQS_PORT=${process.env.FAUXQS_PORT}: want a port number 0-65535`);
  process.exit(2);
}

const app = buildApp({ logger: false, host: "localhost" });
const address = await app.listen({ port, host: "127.0.0.1" });
console.log(`fauxqs listening on ${address}`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await app.close();
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
