// sieval's HTML report: the sample browser. The summary and plots are static HTML; this script
// decodes the samples (gzip'd JSON, base64'd, in #sample-data) only after the first paint, then
// shows one page of rows at a time. Every string of a sample is untrusted: it reaches the page
// through textContent only, never innerHTML.
(function () {
  "use strict";

  const section = document.getElementById("samples");
  const PAGE = Number(section.dataset.pageSize) || 100;
  const $ = (id) => document.getElementById(id);
  const ui = {
    task: $("filter-task"),
    model: $("filter-model"),
    outcome: $("filter-outcome"),
    search: $("filter-search"),
    count: $("sample-count"),
    rows: $("sample-list").tBodies[0],
    prev: $("page-prev"),
    next: $("page-next"),
    info: $("page-info"),
    detail: $("sample-detail"),
  };
  const state = { all: [], shown: [], page: 0, open: null, hay: null };

  // -- building elements, text only ------------------------------------------------------------

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("data-")) node.setAttribute(key, value);
      else node[key] = value;
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function show(value) {
    if (value === null || value === undefined) return "—";
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  function num(value, digits) {
    return typeof value === "number" && isFinite(value) ? value.toFixed(digits) : "—";
  }

  function clip(text, length) {
    const flat = (text || "").replace(/\s+/g, " ").trim();
    return flat.length > length ? flat.slice(0, length - 1) + "…" : flat;
  }

  // -- decoding --------------------------------------------------------------------------------

  async function decode() {
    const text = $("sample-data").textContent.trim();
    let bytes;
    if (typeof Uint8Array.fromBase64 === "function") {
      bytes = Uint8Array.fromBase64(text);
    } else {
      const binary = atob(text);
      bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    // packed grouped by (model, task, group), which gzip compresses best; put back in view order
    const packed = JSON.parse(await new Response(stream).text());
    const samples = new Array(packed.samples.length);
    packed.position.forEach((place, k) => {
      samples[place] = packed.samples[k];
    });
    // a body field that repeated the sample's prompt was sent as null and named in as_prompt
    for (const s of samples) {
      for (const r of s.requests || []) {
        for (const key of r.as_prompt || []) r.body[key] = s.prompt;
      }
    }
    return samples;
  }

  // -- filtering and paging --------------------------------------------------------------------

  function haystacks() {
    // built on the first search: lower-cased id, question, prompt and generation of each sample
    if (state.hay === null) {
      state.hay = state.all.map((s) =>
        [s.id, s.query, s.prompt, s.generation].filter((x) => x).join("\n").toLowerCase()
      );
    }
    return state.hay;
  }

  function apply() {
    const task = ui.task.value;
    const model = ui.model.value;
    const outcome = ui.outcome.value;
    const needle = ui.search.value.trim().toLowerCase();
    const hay = needle ? haystacks() : null;
    const shown = [];
    state.all.forEach((s, i) => {
      if (task && s.task !== task) return;
      if (model && s.model !== model) return;
      if (outcome && s.outcome !== outcome) return;
      if (hay && !hay[i].includes(needle)) return;
      shown.push(i);
    });
    state.shown = shown;
    state.page = 0;
    render();
    section.dataset.search = needle; // what the list now shows (tests wait on it)
  }

  function render() {
    const pages = Math.max(1, Math.ceil(state.shown.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * PAGE;
    const rows = state.shown.slice(start, start + PAGE).map((i) => row(i));
    ui.rows.replaceChildren(...rows);
    ui.count.textContent = `${state.shown.length} of ${state.all.length} samples`;
    ui.count.dataset.shown = String(state.shown.length);
    ui.count.dataset.total = String(state.all.length);
    ui.info.textContent = state.shown.length
      ? `${start + 1}–${start + rows.length} · page ${state.page + 1} of ${pages}`
      : "no sample matches";
    ui.prev.disabled = state.page === 0;
    ui.next.disabled = state.page >= pages - 1;
  }

  function row(i) {
    const s = state.all[i];
    const tr = el(
      "tr",
      {
        class: "sample-row" + (state.open === i ? " selected" : ""),
        tabIndex: 0,
        "data-index": String(i),
        "data-id": s.id,
        "data-model": s.model,
        "data-task": s.task,
        "data-outcome": s.outcome,
      },
      el("td", { class: "id mono", text: s.id }),
      el("td", { text: s.model }),
      el("td", { class: "task", text: s.task }),
      el("td", {}, el("span", { class: "badge " + s.outcome, text: s.outcome })),
      // the question whole (a bare prompt, which may hold many shots, up to 600 characters)
      el("td", { class: "question", title: clip(s.query || s.prompt, 2000), text: s.query ? clip(s.query, 100000) : clip(s.prompt, 600) })
    );
    return tr;
  }

  // -- one sample ------------------------------------------------------------------------------

  function open(i) {
    state.open = i;
    for (const tr of ui.rows.querySelectorAll("tr.selected")) tr.classList.remove("selected");
    const tr = ui.rows.querySelector(`tr[data-index="${i}"]`);
    if (tr) tr.classList.add("selected");
    ui.detail.replaceChildren(...sample(state.all[i]));
    ui.detail.dataset.index = String(i);
    ui.detail.dataset.id = state.all[i].id;
    ui.detail.scrollIntoView({ block: "nearest" });
  }

  function sample(s) {
    const out = [];
    out.push(
      el(
        "h3",
        {},
        el("span", { class: "mono", text: s.id }),
        el("span", { class: "badge " + s.outcome, text: s.outcome })
      )
    );
    const facts = el("dl", { class: "kv" });
    const fact = (name, value) => facts.append(el("dt", { text: name }), el("dd", { text: value }));
    fact("model", s.model);
    fact("task", s.task);
    if (s.group) fact("group", s.group);
    const metrics = Object.entries(s.metrics || {});
    if (metrics.length) fact("metrics", metrics.map(([k, v]) => `${k} ${num(v, 0)}`).join(", "));
    // a choice index as its label (A-D), as the choices table names it
    fact("prediction", show(s.prediction_label ?? s.prediction));
    fact("gold", show(s.gold_label ?? s.gold));
    if (s.rerun) {
      const budgets = (b) => Object.values(b || {}).join("/");
      fact("re-run", `of a censored answer, at max_tokens ${budgets(s.rerun.max_tokens)} (×${s.rerun.factor}); the first, at ${budgets(s.rerun.was)}, stays in records.jsonl`);
    }
    out.push(facts);

    if (s.error) {
      out.push(
        el(
          "div",
          { class: "error", "data-class": s.error.class },
          el("strong", {
            text: s.error.class + (s.error.status ? ` (HTTP ${s.error.status})` : ""),
          }),
          el("pre", { class: "error-message", text: s.error.message || "" })
        )
      );
    }
    if (s.query) out.push(el("h4", { text: "question" }), el("pre", { class: "query", text: s.query }));
    if (s.prompt) {
      out.push(
        el(
          "details",
          { class: "prompt-fold" },
          el("summary", { text: `exact prompt (${s.prompt.length} characters)` }),
          el("pre", { class: "prompt", text: s.prompt })
        )
      );
    }
    if (s.choices && s.choices.length) out.push(...choices(s));
    if (s.generation !== null && s.generation !== undefined) {
      out.push(el("h4", { text: "generation" }), el("pre", { class: "generation", text: s.generation }));
    }
    if (s.extracted !== null && s.extracted !== undefined) {
      out.push(
        el("p", {}, el("span", { class: "muted", text: "extracted answer: " }), el("code", { class: "extracted", text: show(s.extracted) }))
      );
    }
    if (s.execution) {
      const x = s.execution;
      const took = typeof x.wall_seconds === "number" ? `, ${x.wall_seconds} s` : "";
      out.push(
        el(
          "p",
          { class: "execution", "data-status": x.status || "" },
          el("span", { class: "muted", text: "program: " }),
          el("strong", { text: String(x.status) }),
          el("span", { text: ` — ${x.reason || ""}` }),
          el("span", { class: "muted", text: ` (${x.mode || "sandbox"}${took})` })
        )
      );
      if (x.stderr) {
        out.push(
          el(
            "details",
            { class: "stderr-fold" },
            el("summary", { text: "program's stderr (its end)" }),
            el("pre", { class: "stderr", text: x.stderr })
          )
        );
      }
    }
    if (s.requests && s.requests.length) {
      out.push(el("h4", { text: `requests (${s.requests.length})` }));
      for (const r of s.requests) out.push(request(r));
    }
    return out;
  }

  function choices(s) {
    const has = (key) => s.choices.some((c) => c[key] !== null && c[key] !== undefined);
    const columns = [
      ["label", "label", (c) => c.label],
      ["text", "text", (c) => c.text],
      ["logprob", "log-likelihood", (c) => num(c.logprob, 4), true],
      ["n_chars", "chars", (c) => show(c.n_chars), true],
      ["norm_chars", "chars (norm.)", (c) => show(c.norm_chars), true],
      ["n_tokens", "tokens", (c) => show(c.n_tokens), true],
      ["score", `${s.headline} score`, (c) => num(c.score, 4), true],
    ].filter(([key]) => key === "label" || has(key));
    const head = el("tr", {});
    for (const [key, title, , right] of columns) {
      head.append(el("th", { class: right ? "num" : "", text: title, "data-column": key }));
    }
    head.append(el("th", { class: "mark", text: "picked" }), el("th", { class: "mark", text: "gold" }));
    const body = el("tbody", {});
    for (const c of s.choices) {
      const tr = el("tr", {
        class: "choice" + (c.picked ? " picked" : "") + (c.gold ? " gold" : ""),
        "data-label": c.label,
      });
      for (const [key, , cell, right] of columns) tr.append(el("td", { class: right ? "num" : key, text: cell(c) }));
      tr.append(
        el("td", { class: "mark", text: c.picked ? "✓" : "" }),
        el("td", { class: "mark", text: c.gold ? "★" : "" })
      );
      body.append(tr);
    }
    const table = el("table", { class: "grid compact choices" }, el("thead", {}, head), body);
    const out = [el("h4", { text: "choices" }), el("div", { class: "scroll" }, table)];
    if (s.why) out.push(el("p", { class: "why", text: s.why }));
    return out;
  }

  function request(r) {
    const usage = Object.entries(r.usage || {}).map(([k, v]) => `${k} ${v}`).join(", ");
    const timings = r.timings && typeof r.timings.total_s === "number" ? `${(r.timings.total_s * 1000).toFixed(0)} ms` : "";
    const head = [
      r.key,
      r.status === null || r.status === undefined ? "no reply" : `HTTP ${r.status}`,
      timings,
      (r.finish || []).length ? `finish ${r.finish.join(", ")}` : "",
      usage,
      r.error ? `error ${r.error.class || ""}` : "",
    ].filter((x) => x);
    const ledger = el("tbody", {});
    for (const entry of r.ledger || []) {
      ledger.append(
        el(
          "tr",
          { "data-leaf": entry.leaf },
          el("td", { class: "mono", text: entry.leaf }),
          el("td", { text: entry.outcome }),
          el("td", { class: entry.path ? "mono" : "", text: entry.path || entry.reason || "" })
        )
      );
    }
    return el(
      "details",
      { class: "request", "data-request": r.key },
      el("summary", { text: head.join(" · ") }),
      r.error
        ? el("div", { class: "error" }, el("pre", { class: "error-message", text: show(r.error.message || r.error) }))
        : null,
      el(
        "details",
        { class: "wire" },
        el("summary", { text: "wire body, exactly as sent" }),
        el("pre", {
          class: "wire-body",
          "data-request": r.key,
          text: r.body === null || r.body === undefined ? "(no body was built)" : JSON.stringify(r.body, null, 2),
        })
      ),
      el(
        "details",
        { class: "ledger-fold" },
        el("summary", { text: `decision ledger (${(r.ledger || []).length} leaves)` }),
        el(
          "table",
          { class: "grid compact ledger", "data-request": r.key },
          el("thead", {}, el("tr", {}, el("th", { text: "leaf" }), el("th", { text: "outcome" }), el("th", { text: "path or reason" }))),
          ledger
        )
      )
    );
  }

  // -- wiring ----------------------------------------------------------------------------------

  function wire() {
    let timer = 0;
    for (const select of [ui.task, ui.model, ui.outcome]) select.addEventListener("change", apply);
    ui.search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(apply, 120);
    });
    $("filters").addEventListener("submit", (event) => event.preventDefault());
    ui.prev.addEventListener("click", () => {
      state.page -= 1;
      render();
    });
    ui.next.addEventListener("click", () => {
      state.page += 1;
      render();
    });
    ui.rows.addEventListener("click", (event) => {
      const tr = event.target.closest("tr.sample-row");
      if (tr) open(Number(tr.dataset.index));
    });
    ui.rows.addEventListener("keydown", (event) => {
      const tr = event.target.closest("tr.sample-row");
      if (tr && event.key === "Enter") open(Number(tr.dataset.index));
    });
  }

  function counts() {
    const by = { correct: 0, wrong: 0, failed: 0, censored: 0 };
    for (const s of state.all) by[s.outcome] = (by[s.outcome] || 0) + 1;
    for (const option of ui.outcome.options) {
      if (option.value) option.textContent = `${option.value} (${by[option.value] || 0})`;
    }
  }

  async function start() {
    try {
      state.all = await decode();
    } catch (error) {
      ui.count.textContent = `the samples could not be read: ${error}`;
      ui.count.dataset.error = String(error);
      return;
    }
    wire();
    counts();
    apply();
    section.dataset.ready = "true";
    performance.mark("sieval-samples-ready");
  }

  // after the first paint: the frame requested here paints, then the timeout runs
  requestAnimationFrame(() => setTimeout(start, 0));
})();
