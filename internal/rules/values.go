package rules

import "github.com/sqsloop/sqsloop"

// The values of the core events' enumerations, in the order instruments
// name them: every value of sqsloop.ProcessEvent.Outcome,
// sqsloop.SettleEntry.Kind and sqsloop.LeaseLostEvent.Reason, for what
// reports each one, at 0 too (otelsqsloop, leasepage).
var (
	Outcomes = []string{sqsloop.OutcomeAcked, sqsloop.OutcomeNacked, sqsloop.OutcomePanicked, sqsloop.OutcomeGivenBack,
		sqsloop.OutcomeLeaseLost, sqsloop.OutcomeAbandoned, sqsloop.OutcomeDeadLettered}
	SettleKinds      = []string{sqsloop.KindExtend, sqsloop.KindAck, sqsloop.KindNack, sqsloop.KindGiveBack}
	LeaseLostReasons = []string{sqsloop.LostNoBeats, sqsloop.LostReceiptHandleExpired, sqsloop.LostCeiling,
		sqsloop.LostCallFailures, sqsloop.LostBeforeStart}
)
