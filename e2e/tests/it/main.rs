//! Acceptance tests against the real binary.

mod bridge;
mod crash;
mod demo;
mod apps;
mod web;
