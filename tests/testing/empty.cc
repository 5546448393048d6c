// Keeps tlm_testing non-empty before any helper exists.
