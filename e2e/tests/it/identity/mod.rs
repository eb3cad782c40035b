//! Identity from outside (R6): SCIM judged by the SCIM conformance checker
//! `scim2-tester`, and an MCP client signing in through the company's
//! provider with the official TypeScript SDK's OAuth client.

mod mcp_oauth;
mod scim;
