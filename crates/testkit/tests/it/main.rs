//! testkit's own tests: one binary (linking stays fast on two cores).

mod idp;
mod protected;
