// Starts the chat host: loads the WebAssembly module beside this file.
import init from "./{js}";
init({ module_or_path: new URL("./{wasm}", import.meta.url) });
