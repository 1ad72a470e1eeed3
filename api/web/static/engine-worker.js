// The rules engine in the phone's browser: a Web Worker (a module) that runs the server's own
// Python code under Pyodide, so the page's first paint and its taps never wait for it.
// engine.js starts it with {init: {pyodide, bundle}} (the vendored runtime's folder and the
// engine bundle's URL, api/web/engine.py); it loads the runtime, unpacks the bundle (api.rules,
// api.table, jinja2, markupsafe) into /engine, imports api.table.browser and answers
// {ready: true, timings} or {ready: false, error}. Then each {id, call, arg} is answered with
// {id, result} or {id, error}: api.table.browser.<call>(JSON of arg) returns JSON; only the
// module's own public functions can be called, and a Python exception answers its message.
// A file of the engine that cannot be fetched (offline and not kept by the service worker, or
// the server unreachable) answers {ready: false, error, missing: true} at once: Pyodide only
// logs a failed fetch of its pyodide.asm.wasm ("wasm instantiation failed!") and never settles
// (pyodide/pyodide#6296, closed unmerged), so the fetches of the runtime's files are watched.
// Served with a Content-Security-Policy of its own that allows compiling WebAssembly.

const EXTRACT_DIR = "/engine";

// Python's side of the calls, in a namespace of its own
const DISPATCH = `
import inspect
import sys

sys.path.insert(0, ${JSON.stringify(EXTRACT_DIR)})


def load():
    import api.table.browser as module

    global browser, public
    browser = module
    public = frozenset(
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and inspect.isfunction(value)
        and value.__module__ == module.__name__
    )


def call(name, arg):
    if name not in public:
        return ["error", f"Die Engine kennt keine Funktion {name!r}."]
    try:
        return ["result", getattr(browser, name)(arg)]
    except Exception as err:
        message = getattr(err, "message", None) or str(err) or type(err).__name__
        return ["error", str(message)]
`;

let booting = null;
let dispatch = null;

function since(start) {
  return Math.round(performance.now() - start);
}

function missing(url, why) {
  const error = new Error(`${url.split("/").pop()}: ${why}`);
  error.missing = true;
  return error;
}

// a Promise that rejects when a fetch under `folder` fails or answers an error status
function watchFetches(folder) {
  let failed;
  const failure = new Promise((_, reject) => {
    failed = reject;
  });
  failure.catch(() => {});
  const fetchFile = self.fetch.bind(self);
  self.fetch = (input, options) => {
    const answer = fetchFile(input, options);
    const url = String((input && input.url) || input);
    if (url.startsWith(folder)) {
      answer.then(
        (response) => response.ok || failed(missing(url, `HTTP ${response.status}`)),
        () => failed(missing(url, "nicht erreichbar")),
      );
    }
    return answer;
  };
  return failure;
}

async function boot(init) {
  const timings = {};
  const started = performance.now();
  // the bundle travels while the runtime starts
  const bundle = fetch(init.bundle).then((response) => {
    if (!response.ok) throw missing(init.bundle, `HTTP ${response.status}`);
    return response.arrayBuffer();
  }, () => {
    throw missing(init.bundle, "nicht erreichbar");
  }).then((buffer) => {
    timings.fetch = since(started); // in parallel with the runtime's start
    return buffer;
  });
  bundle.catch(() => {});
  const runtimeFailed = watchFetches(new URL(init.pyodide, self.location.href).href);
  const { loadPyodide } = await import(`${init.pyodide}pyodide.mjs`).catch(() => {
    throw missing(`${init.pyodide}pyodide.mjs`, "nicht erreichbar");
  });
  const pyodide = await Promise.race([
    loadPyodide({
      indexURL: init.pyodide,
      packageBaseUrl: init.pyodide, // no CDN, not even as a default (the engine loads no packages)
      stdout: () => {},
      stderr: (line) => console.warn(line),
    }).catch((error) => {
      // its pyodide.asm.mjs is imported, not fetched: a module script that could not be loaded
      if (error instanceof TypeError && /module/i.test(error.message)) {
        throw missing(`${init.pyodide}pyodide.asm.mjs`, "nicht erreichbar");
      }
      throw error;
    }),
    runtimeFailed,
    bundle.then(() => new Promise(() => {})), // only its failure ends the wait early
  ]);
  timings.runtime = since(started);
  const unpacking = performance.now();
  pyodide.unpackArchive(await bundle, "zip", { extractDir: EXTRACT_DIR });
  timings.bundle = since(unpacking);
  const importing = performance.now();
  const namespace = pyodide.globals.get("dict")();
  pyodide.runPython(DISPATCH, { globals: namespace });
  namespace.get("load")();
  timings.import = since(importing);
  dispatch = namespace.get("call");
  timings.total = since(started);
  return timings;
}

function answer(message) {
  const out = dispatch(String(message.call), JSON.stringify(message.arg ?? null));
  const [kind, text] = out.toJs();
  out.destroy();
  if (kind === "result") {
    self.postMessage({ id: message.id, result: JSON.parse(text) });
  } else {
    self.postMessage({ id: message.id, error: text });
  }
}

self.addEventListener("message", (event) => {
  const message = event.data || {};
  if (message.init) {
    if (booting) return;
    booting = boot(message.init).then(
      (timings) => self.postMessage({ ready: true, timings }),
      (error) => {
        const text = String((error && error.message) || error);
        self.postMessage({ ready: false, error: text, missing: Boolean(error && error.missing) });
        throw error;
      },
    );
    booting.catch(() => {});
    return;
  }
  if (!booting) {
    self.postMessage({ id: message.id, error: "Die Engine ist noch nicht gestartet." });
    return;
  }
  booting.then(
    () => {
      try {
        answer(message);
      } catch (error) {
        self.postMessage({ id: message.id, error: String((error && error.message) || error) });
      }
    },
    () => self.postMessage({ id: message.id, error: "Die Engine konnte nicht geladen werden." }),
  );
});
