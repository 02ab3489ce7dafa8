//! Scenarios in handler files (issue 40): entries that answer by a state
//! and move it, a state per key from a template, and what a wrong field
//! says. The admin API's `scenarios` resource: scopes.rs; a checkout flow
//! from Python: packages/python/tests.

use crate::common::*;

#[test]
fn entries_answer_by_a_state_per_key_that_other_entries_move() {
    let dir = with_handler_file(
        r#"
- path: /orders/:id
  json: { state: open }
  scenario: order
  key: "{{ request.params.id }}"
  when_state: started
- path: /orders/:id
  json: { state: shipped }
  scenario: order
  key: "{{ request.params.id }}"
  when_state: shipped
- method: POST
  path: /orders/:id/ship
  status: 204
  scenario: order
  key: "{{ request.params.id }}"
  set_state: shipped
"#,
    );
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url();
    assert_eq!(
        call(None, &["-X", "POST", &format!("{base}/orders/1/ship")]).0,
        204
    );
    assert_eq!(get_json(&format!("{base}/orders/1"))["state"], "shipped");
    assert_eq!(get_json(&format!("{base}/orders/2"))["state"], "open");
    assert_eq!(
        get_json(&format!("{base}/__mocklib/scenarios")),
        serde_json::json!([{"scenario": "order", "key": "1", "state": "shipped"}])
    );
}

#[test]
fn a_scenario_field_without_its_partner_fails_the_load_naming_the_entry() {
    for (entry, expected) in [
        (
            "- path: /a\n  when_state: paid\n",
            "entry 1 (ALL /a): when_state and set_state need `scenario`",
        ),
        (
            "- path: /a\n  scenario: s\n",
            "entry 1 (ALL /a): scenario: give when_state, set_state or both",
        ),
        (
            "- path: /a\n  chaos: { fault_rate: 3 }\n",
            "entry 1 (ALL /a): chaos.fault_rate: 3 is not a share from 0 to 1",
        ),
        (
            "- path: /a\n  chaos: { rate: 3 }\n",
            "entry 1 (ALL /a): unknown field `rate`",
        ),
    ] {
        let dir = with_handler_file(entry);
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_mocklib"))
            .args(["serve", "--handlers", "handlers.yaml"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(expected),
            "{entry}: {stderr}"
        );
    }
}
