//! lattice-identity's tests, one binary: a fake provider (`idp`) served on
//! 127.0.0.1, and the relying party driven through its public API.

mod bearer;
mod config;
mod flow;
mod idp;
mod keys;
mod logout;
mod mapping;
