package plan

import "strings"

// Intent is a set of query-intent flags. A query term from a flag's list
// sets the flag; the flag pays when the scored text has one of its cues.
type Intent uint16

// The flags, in the order Score applies them.
const (
	IntentLatest Intent = 1 << iota
	IntentTemporal
	IntentAfter
	IntentBefore
	IntentCorrection
	IntentReminder
	IntentContrastive
	IntentSocial
	IntentSchedule
	IntentQuantity
	IntentAlias
)

func intentOrder() [11]Intent {
	return [11]Intent{IntentLatest, IntentTemporal, IntentAfter, IntentBefore,
		IntentCorrection, IntentReminder, IntentContrastive, IntentSocial,
		IntentSchedule, IntentQuantity, IntentAlias}
}

// Has reports whether every flag of f is set in i.
func (i Intent) Has(f Intent) bool { return i&f == f }

// String names the set flags in table order, joined by "|".
func (i Intent) String() string {
	var names []string
	for _, f := range intentOrder() {
		if i&f != 0 {
			names = append(names, intentName(f))
		}
	}
	return strings.Join(names, "|")
}

func intentName(f Intent) string {
	switch f {
	case IntentLatest:
		return "latest"
	case IntentTemporal:
		return "temporal"
	case IntentAfter:
		return "after"
	case IntentBefore:
		return "before"
	case IntentCorrection:
		return "correction"
	case IntentReminder:
		return "reminder"
	case IntentContrastive:
		return "contrastive"
	case IntentSocial:
		return "social"
	case IntentSchedule:
		return "schedule"
	case IntentQuantity:
		return "quantity"
	case IntentAlias:
		return "alias"
	}
	return ""
}

// triggers returns the flags a single query term sets. The lists include
// "when" (temporal, schedule) and "who" (social) as the original's do; both
// are stopwords, never become terms, and so never set a flag.
func triggers(term string) Intent {
	var f Intent
	switch term {
	case "latest", "recent", "current", "currently", "now", "updated", "update", "status":
		f |= IntentLatest
	}
	switch term {
	case "before", "after", "during", "timeline", "temporal", "history", "when":
		f |= IntentTemporal
	}
	switch term {
	case "after":
		f |= IntentAfter
	case "before":
		f |= IntentBefore
	}
	switch term {
	case "correction", "corrected", "correct", "changed", "updated", "now", "avoid":
		f |= IntentCorrection
	}
	switch term {
	case "remember", "recall", "remind", "reminder", "said", "told":
		f |= IntentReminder
	}
	switch term {
	case "switch", "switched", "switching", "changed", "change", "moved", "move",
		"became", "instead", "cancel", "cancelled", "canceled":
		f |= IntentContrastive
	}
	switch term {
	case "friend", "coworker", "colleague", "teammate", "recommend", "recommended",
		"suggest", "suggested", "introduced", "referred", "because", "who":
		f |= IntentSocial
	}
	switch term {
	case "when", "date", "time", "schedule", "scheduled", "reschedule", "rescheduled",
		"appointment", "meeting", "deadline", "calendar", "tomorrow", "tonight":
		f |= IntentSchedule
	}
	switch term {
	case "many", "count", "number", "quantity", "total", "amount", "score",
		"percent", "percentage":
		f |= IntentQuantity
	}
	switch term {
	case "roommate", "housemate", "manager", "supervisor", "lead", "owner",
		"name", "named", "called", "pet", "dog", "cat":
		f |= IntentAlias
	}
	return f
}

// rule is how one set flag scores a text: +bonus when a reward cue matches,
// then −penalty (saturating at 0) when a penalty cue matches.
type rule struct {
	bonus, penalty uint32
	reward, punish []needle
	digit          bool // any ASCII digit in the text also rewards
}

const (
	bonusLatest      = 75
	bonusTemporal    = 50
	bonusAfterBefore = 65
	penaltyDirection = 25
	bonusCorrection  = 90
	bonusReminder    = 70
	bonusContrastive = 85
	bonusSocial      = 80
	bonusSchedule    = 80
	bonusQuantity    = 80
	bonusAlias       = 75
)

func ruleFor(f Intent) rule {
	switch f {
	case IntentLatest:
		return rule{bonus: bonusLatest, reward: needles("latest", "recent", "current", "updated", "changed", "replaced")}
	case IntentTemporal:
		return rule{bonus: bonusTemporal, reward: needles("timeline", "temporal", "history", "sequence", "before", "after", "during")}
	case IntentAfter:
		return rule{bonus: bonusAfterBefore, penalty: penaltyDirection,
			reward: needles("after", "later", "latest", "new", "current", "update", "moved to"),
			punish: needles("before", "earlier", "old")}
	case IntentBefore:
		return rule{bonus: bonusAfterBefore, penalty: penaltyDirection,
			reward: needles("before", "earlier", "old"),
			punish: needles("after", "later", "latest", "new", "current")}
	case IntentCorrection:
		return rule{bonus: bonusCorrection, reward: needles("correction", "corrected", "no longer", "instead", "replaced", "now")}
	case IntentReminder:
		return rule{bonus: bonusReminder, reward: needles("remember", "reminder", "mentioned", "said", "told", "note")}
	case IntentContrastive:
		return rule{bonus: bonusContrastive, reward: needles("switched", "switch", "moved", "became", "instead", "no longer", "changed from")}
	case IntentSocial:
		return rule{bonus: bonusSocial, reward: needles("recommended", "suggested", "introduced", "referred", "because", "from")}
	case IntentSchedule:
		return rule{bonus: bonusSchedule, reward: needles("rescheduled", "scheduled", "moved to", "appointment", "deadline", "calendar", "at ", "on ")}
	case IntentQuantity:
		return rule{bonus: bonusQuantity, digit: true, reward: needles("count", "total", "number", "score", "amount", "quantity")}
	case IntentAlias:
		return rule{bonus: bonusAlias, reward: needles("roommate", "manager", "owner", "named", "called", "pet", "dog", "cat")}
	}
	return rule{}
}

func needles(words ...string) []needle {
	out := make([]needle, len(words))
	for i, w := range words {
		out[i] = newNeedle(w)
	}
	return out
}
