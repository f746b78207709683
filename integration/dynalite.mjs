// dynalite.mjs starts the dynalite DynamoDB emulator for the tests of
// jobstate/dynamostore and the integration module (scripts/test.sh runs it
// with node_modules/.bin/node).
//
// It listens on 127.0.0.1 only, on the port in DYNALITE_PORT, or on a free
// port the kernel picks when that is unset or 0 (dynalite's own CLI reads 0
// as its default, 4567), and prints one line once it accepts connections:
//
//	Dynalite listening at: http://127.0.0.1:PORT
//
// A known dynalite bug, declared here by name: it throws from a request's
// "error" event (index.js: req.on('error', function (err) { throw err })),
// so a client that goes away mid-request (a process a test SIGKILLs, a
// context cancelled during a call: ECONNRESET, "aborted") ends the whole
// server, and every later test that needs it fails with "connection
// refused". This wrapper catches that one exception, says so on stderr, and
// goes on serving (nothing of the aborted request was applied: its body
// never arrived whole); any other uncaught exception still ends it.
import dynalite from "dynalite";

const port = Number.parseInt(process.env.DYNALITE_PORT ?? "0", 10);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`dynalite.mjs: DYNALITE_PORT=${process.env.DYNALITE_PORT}: want a port number 0-65535`);
  process.exit(2);
}

let aborted = 0;
process.on("uncaughtException", (err) => {
  if (err && err.code === "ECONNRESET" && err.message === "aborted") {
    aborted++;
    console.error(`dynalite.mjs: a client aborted a request (dynalite throws on it; ${aborted} so far): going on`);
    return;
  }
  console.error(err);
  process.exit(1);
});

const server = dynalite({});
server.listen(port, "127.0.0.1", () => {
  console.log(`Dynalite listening at: http://127.0.0.1:${server.address().port}`);
});
process.on("SIGTERM", () => process.exit(0));
process.on("SIGINT", () => process.exit(0));
