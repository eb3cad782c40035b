//! One file a route.

mod console;
mod home;
mod people;
mod sign_in;
pub(crate) mod thread;
mod workspace;

pub use console::Console;
pub use home::Home;
pub use sign_in::SignIn;
pub use thread::ThreadPage;
pub use workspace::WorkspacePage;
