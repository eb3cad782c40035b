//! A thread (REQUIREMENTS.md W1): its timeline live from the event stream, forms the
//! agent asked for, artifacts, runs and their status, and the composer.
//! The effective switches arrive pushed (I4): what is off stops being
//! offered and shows why.
//!
//! A file for each part: [`page`] is the page itself and what it follows
//! (the event stream, [`switches`]); [`timeline`] draws its items,
//! [`artifacts`] and [`forms`] the artifacts among them, [`connect`] a call
//! that waits for a person to sign in to its server, [`elicitation`] a
//! connected server's question in the middle of a call, [`writing`] what
//! the agent is writing; [`composer`] with its [`agent_menu`], [`pins`],
//! [`share`], [`submit`] (with [`nonces`]); [`newest`] keeps the reader at the newest item; [`ctx`] is what they all read.

mod agent_menu;
mod artifacts;
mod composer;
mod connect;
mod ctx;
mod elicitation;
mod focus;
mod forms;
mod newest;
mod nonces;
mod offers;
pub mod page;
mod pins;
mod share;
mod submit;
mod switches;
mod timeline;
mod writing;
