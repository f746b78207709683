package sqlstate

// The statements both dialects run, with placeholders p(1)… of the dialect
// (PostgreSQL $1, SQLite ?1): written once, so that the rule of a claim
// reads the same on both.

// Statements are a dialect's SQL.
type Statements struct {
	Get, Upsert, Claim, Delete, DeleteOwned, Sweep string
	Take, Pause, SweepRates                        string
}

// NewStatements returns the statements with placeholders made by p (the
// n-th argument) and greatest, the dialect's function of the larger of two
// values (PostgreSQL GREATEST, SQLite's two-argument max).
func NewStatements(p func(n int) string, greatest string) Statements {
	// A take (jobstate.Rate.TakeAt) as one upsert, under the row's lock:
	// with from = greatest(tat, now), it is granted when from − τ − now ≤
	// maxWait, and then moves tat to from + T; refused, it keeps tat.
	// last_granted says which, in the same RETURNING (both SET
	// expressions read the row as it was). Arguments: key, now, T, τ,
	// maxWait, in Unix microseconds. The numbers are cast, so that
	// PostgreSQL knows their type where an expression alone cannot say
	// (SQLite reads the cast as an affinity).
	n := func(i int) string { return "CAST(" + p(i) + " AS BIGINT)" }
	from := greatest + "(sqsloop_ratelimit.tat, " + n(2) + ")"
	granted := from + " - " + n(4) + " - " + n(2) + " <= " + n(5)
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
		Take: "INSERT INTO sqsloop_ratelimit (rate_key, tat, last_granted) VALUES (" + p(1) + ", " + n(2) + " + " + n(3) + ", true)" +
			" ON CONFLICT (rate_key) DO UPDATE SET last_granted = " + granted + "," +
			" tat = CASE WHEN " + granted + " THEN " + from + " + " + n(3) + " ELSE sqsloop_ratelimit.tat END" +
			" RETURNING tat, last_granted",
		// A pause (jobstate.Rate.PauseAt): tat = greatest(tat, until + τ),
		// the argument given as that sum.
		Pause: "INSERT INTO sqsloop_ratelimit (rate_key, tat, last_granted) VALUES (" + p(1) + ", " + n(2) + ", false)" +
			" ON CONFLICT (rate_key) DO UPDATE SET tat = " + greatest + "(sqsloop_ratelimit.tat, excluded.tat)",
		// A key whose TAT has passed is as good as absent.
		SweepRates: "DELETE FROM sqsloop_ratelimit WHERE rate_key IN (SELECT rate_key FROM sqsloop_ratelimit WHERE tat <= " + n(1) + " LIMIT " + p(2) + ")",
	}
}
