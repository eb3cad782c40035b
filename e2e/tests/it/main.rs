//! Acceptance tests against the real binary.

mod crash;
mod demo;
