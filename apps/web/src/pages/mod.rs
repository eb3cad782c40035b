//! The top layer: the shell (the header and the routes) and one module a
//! route. Pages draw with `components` and read and write through `data`.

pub mod connections;
pub mod console;
pub mod home;
pub mod shell;
pub mod side;
pub mod sign_in;
pub mod thread;
pub mod waiting;
pub mod workspace;
