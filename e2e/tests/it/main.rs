//! Acceptance tests against the real binary.

mod acceptance;
mod agui;
mod apps;
mod bridge;
mod crash;
mod demo;
mod edge;
mod files;
mod hostile;
mod identity;
mod mcp;
mod migrate;
mod operator;
mod replicas;
mod revocation;
mod seal;
mod tls;
mod web;
