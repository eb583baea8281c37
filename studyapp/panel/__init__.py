"""The Prolific connection (docs/prolific.md): the API client with retries, the encrypted
token, the outcome-to-completion-code mapping, reconciliation of Prolific's submissions with
the study's participants, and the actions (approve, reject, screen out, ask to return,
bonuses), each recorded before it is sent and never sent twice."""
