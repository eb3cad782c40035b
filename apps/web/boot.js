// Starts the chat host: loads the WebAssembly module beside this file.
import init from "./{js}";
import { prefetch } from "./{split}";
// A thread's page (`/t/<id>`) is where forms are drawn. Their chunk is
// fetched and compiled now, beside the main module, rather than once the
// thread's events have named a form: then it would be a fetch and a compile
// more between the events and the form taking the focus.
if (location.pathname.startsWith("/t/")) prefetch("form_view");
init({ module_or_path: new URL("./{wasm}", import.meta.url) });
