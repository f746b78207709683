// The console's script: a few fetches where they save a reload. Every page
// works without it (but for the counts, filled in from /queue/count).
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]');

  // data-count="URL": the count of matching messages, read after the page
  // (a database counts 100,000 messages in a second or so). Elements with
  // data-count-copy show it too.
  for (const el of document.querySelectorAll("[data-count]")) {
    fetch(el.dataset.count, { headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : r.text().then((t) => Promise.reject(new Error(t)))))
      .then((c) => {
        const text = (c.exact ? "" : "at least ") + c.text;
        el.textContent = text;
        el.dataset.n = c.n;
        for (const copy of document.querySelectorAll("[data-count-copy]")) copy.textContent = text;
      })
      .catch((e) => {
        el.textContent = "?";
        el.title = e.message;
      });
  }

  // data-refresh="URL" data-every="S": the element's content, read again
  // every S seconds (the queue list's rows).
  for (const el of document.querySelectorAll("[data-refresh]")) {
    const every = 1000 * (Number(el.dataset.every) || 10);
    const tick = () =>
      fetch(el.dataset.refresh)
        .then((r) => (r.ok ? r.text() : Promise.reject(new Error(r.statusText))))
        .then((html) => {
          el.innerHTML = html;
        })
        .catch(() => {})
        .finally(() => setTimeout(tick, every));
    setTimeout(tick, every);
  }

  // data-poll="URL" (a job's JSON): its data-field elements follow the
  // job, and a <progress> inside it too, until the job ends; then the page
  // reloads, to show the end (data-reload, or a job page).
  for (const el of document.querySelectorAll("[data-poll]")) {
    const progress = el.querySelector("progress");
    const fmt = (v) => (typeof v === "number" ? v.toLocaleString("en-US") : v || "");
    const tick = () =>
      fetch(el.dataset.poll, { headers: { Accept: "application/json" } })
        .then((r) => (r.ok ? r.json() : Promise.reject(new Error(r.statusText))))
        .then((j) => {
          for (const f of el.querySelectorAll("[data-field]")) {
            const v = j[f.dataset.field];
            if (f.dataset.field === "ended") continue;
            f.textContent = fmt(v);
          }
          if (progress) {
            progress.max = Math.max(j.planned, j.done, 1);
            progress.value = j.done;
          }
          if (j.state === "running") {
            setTimeout(tick, 250);
          } else {
            location.reload();
          }
        })
        .catch(() => setTimeout(tick, 1000));
    setTimeout(tick, 250);
  }

  // Buttons that change something carry the CSRF token in their form; a
  // form posted by script carries it in a header.
  void csrf;
})();
