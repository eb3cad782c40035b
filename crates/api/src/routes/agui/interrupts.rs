//! An AG-UI interrupt's id: the run and the tool call it waits on, written
//! into `RUN_FINISHED` and read back from a `resume`.

use lattice_core::{Error, RunId};

/// An interrupt's id: the run and the request it waits on.
pub(super) fn interrupt_id(run: &str, tool_call_id: &str) -> String {
    format!("{run}:{tool_call_id}")
}

pub(super) fn parse_interrupt(id: &str) -> Result<(RunId, String), Error> {
    let (run, tool_call_id) = id.split_once(':').ok_or_else(|| Error::field("resume.interruptId", "pattern", "not an interrupt of lattice's"))?;
    let run = RunId::parse("resume.interruptId", run)?;
    Ok((run, tool_call_id.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_names_its_run_and_request() {
        let id = interrupt_id("run_01m8qgrc8c3an5n4y1jfrnaej9", "call_ask_form_1");
        let (run, call) = parse_interrupt(&id).unwrap();
        assert_eq!((run.as_str(), call.as_str()), ("run_01m8qgrc8c3an5n4y1jfrnaej9", "call_ask_form_1"));
        assert!(parse_interrupt("nothing").is_err());
    }
}
