package sqlstate

// The statements both dialects run, with placeholders p(1)… of the dialect
// (PostgreSQL $1, SQLite ?1): written once, so that the rule of a claim
// reads the same on both.

// Statements are a dialect's SQL.
type Statements struct {
	Get, Upsert, Claim, Delete, DeleteOwned, Sweep string
}

// NewStatements returns the statements with placeholders made by p (the
// n-th argument).
func NewStatements(p func(n int) string) Statements {
	live := "(expires_at = 0 OR expires_at > " + p(2) + ")"
	expired := "(expires_at <> 0 AND expires_at <= "
	cols := "(job_key, state, owner, value, lease_until, expires_at) VALUES (" + p(1) + ", " + p(2) + ", " + p(3) + ", " + p(4) + ", " + p(5) + ", " + p(6) + ")"
	set := " ON CONFLICT (job_key) DO UPDATE SET state = excluded.state, owner = excluded.owner, value = excluded.value, " +
		"lease_until = excluded.lease_until, expires_at = excluded.expires_at"
	return Statements{
		Get:    "SELECT state, owner, value, lease_until, expires_at FROM sqsloop_jobstate WHERE job_key = " + p(1) + " AND " + live,
		Upsert: "INSERT INTO sqsloop_jobstate " + cols + set,
		// The one rule of a claim (jobstate.Record.Claimable), over a
		// row that may be expired: a single statement, atomic under
		// both databases' row (PostgreSQL) or file (SQLite) lock.
		Claim: "INSERT INTO sqsloop_jobstate " + cols + set + " WHERE " +
			"(sqsloop_jobstate.expires_at <> 0 AND sqsloop_jobstate.expires_at <= " + p(7) + ") OR " +
			"(sqsloop_jobstate.state = 'in_progress' AND (sqsloop_jobstate.lease_until <= " + p(7) + " OR sqsloop_jobstate.owner = excluded.owner))",
		Delete: "DELETE FROM sqsloop_jobstate WHERE job_key = " + p(1),
		DeleteOwned: "DELETE FROM sqsloop_jobstate WHERE job_key = " + p(1) + " AND ((state = 'in_progress' AND owner = " + p(2) + ") OR " +
			expired + p(3) + "))",
		Sweep: "DELETE FROM sqsloop_jobstate WHERE job_key IN (SELECT job_key FROM sqsloop_jobstate WHERE " + expired + p(1) + ") LIMIT " + p(2) + ")",
	}
}
