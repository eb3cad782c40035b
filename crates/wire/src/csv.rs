//! The switch audit as CSV (RFC 4180), as the console exports it: one
//! header, one row per change, every field quoted.

use lattice_core::switch_audit::AuditEntry;

/// The header and the rows, CRLF-terminated.
pub fn audit_csv(rows: &[AuditEntry]) -> String {
    let mut out = String::from("seq,at,actor,level,key,old,new,reason\r\n");
    for r in rows {
        let seq = r.seq.to_string();
        let c = &r.change;
        let fields = [seq.as_str(), &r.at, &r.actor, &c.level, &c.key, &c.old, &c.new, &c.reason];
        let quoted: Vec<String> = fields.iter().map(|f| format!("\"{}\"", f.replace('"', "\"\""))).collect();
        out.push_str(&quoted.join(","));
        out.push_str("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use lattice_core::event::SwitchSet;

    use super::*;

    #[test]
    fn fields_are_quoted_and_quotes_doubled() {
        let row = AuditEntry {
            seq: 7,
            at: "2026-11-30T12:00:00Z".into(),
            actor: "cli:oncall".into(),
            change: SwitchSet {
                level: "deployment".into(),
                key: "ui:mini-apps".into(),
                old: "unset".into(),
                new: "off".into(),
                reason: "incident \"42\", apps, misbehave\nbadly".into(),
            },
        };
        assert_eq!(
            audit_csv(&[row]),
            "seq,at,actor,level,key,old,new,reason\r\n\"7\",\"2026-11-30T12:00:00Z\",\"cli:oncall\",\"deployment\",\"ui:mini-apps\",\"unset\",\"off\",\"incident \"\"42\"\", apps, misbehave\nbadly\"\r\n"
        );
        assert_eq!(audit_csv(&[]), "seq,at,actor,level,key,old,new,reason\r\n");
    }
}
