package plan

// synonyms returns the words that stand in for term in a group, or nil.
//
// The first part follows the original's table arm for arm, so plans match
// its scores. Its last dozen arms (identity … writing/reading) are left out:
// they were tuned to one evaluation corpus. Keys that are stopwords (where,
// when, who, why, conversation, dialogue) are kept for conformance although
// no term can ever reach them. The second part adds everyday
// conversational-memory vocabulary under keys the original did not have, so
// no original group changes.
//
// A switch rather than a package-level map keeps the table immutable.
func synonyms(term string) []string {
	switch term {
	// Ported from the original.
	case "checkout":
		return []string{"payment", "purchase", "order"}
	case "payment":
		return []string{"checkout", "purchase", "billing"}
	case "billing", "purchase", "order":
		return []string{"checkout", "payment"}
	case "risk":
		return []string{"fraud", "score", "safety"}
	case "fraud":
		return []string{"risk", "score", "safety"}
	case "score":
		return []string{"risk", "fraud", "safety"}
	case "latest", "recent", "current", "currently", "now":
		return []string{"updated", "update", "status"}
	case "status", "state":
		return []string{"current", "latest", "condition"}
	case "failed", "failure", "outage":
		return []string{"error", "incident", "down"}
	case "down", "error":
		return []string{"failed", "failure", "outage", "incident"}
	case "dependency", "backend":
		return []string{"service", "system"}
	case "ticket", "followup", "follow":
		return []string{"support", "agent", "helpdesk"}
	case "support", "agent", "helpdesk":
		return []string{"ticket", "followup"}
	case "preference", "preferences":
		return []string{"likes", "setting", "choice"}
	case "setting", "choice", "likes":
		return []string{"preference"}
	case "want", "wants", "wanted":
		return []string{"prefer", "preference", "choice"}
	case "prefer", "preferred":
		return []string{"want", "preference", "choice"}
	case "update", "updated", "updates":
		return []string{"changed", "change", "modify", "replaced"}
	case "changed", "change", "modify", "replaced":
		return []string{"update", "updated", "switched"}
	case "switch", "switched", "switching":
		return []string{"changed", "moved", "replaced"}
	case "moved", "move":
		return []string{"switched", "changed", "relocated"}
	case "session", "sessions":
		return []string{"dialogue", "conversation", "visit"}
	case "conversation", "dialogue", "chat":
		return []string{"session", "message"}
	case "message", "messages":
		return []string{"conversation", "dialogue", "session"}
	case "user", "customer":
		return []string{"person", "account", "member"}
	case "service":
		return []string{"dependency", "backend", "system"}
	case "timeline", "temporal", "history", "sequence":
		return []string{"before", "after", "during"}
	case "before", "after", "during":
		return []string{"timeline", "temporal", "sequence"}
	case "schedule", "scheduled", "reschedule", "rescheduled":
		return []string{"calendar", "appointment", "time", "date"}
	case "appointment", "meeting", "deadline":
		return []string{"schedule", "calendar", "date", "time"}
	case "tomorrow", "tonight", "morning", "afternoon", "evening":
		return []string{"time", "date"}
	case "many", "count", "number", "quantity":
		return []string{"total", "amount"}
	case "total", "amount":
		return []string{"count", "number", "quantity"}
	case "multi", "hop", "reasoning":
		return []string{"related", "connection", "because"}
	case "why", "because", "reason":
		return []string{"cause", "root", "explain", "problem"}
	case "cause", "root":
		return []string{"because", "reason", "incident", "problem"}
	case "problem", "issue":
		return []string{"incident", "failure", "resolved", "cause"}
	case "resolved", "fixed":
		return []string{"recovered", "solved", "closed"}
	case "recovered", "recovery", "solved", "closed":
		return []string{"resolved", "fixed"}
	case "where", "location", "located":
		return []string{"place", "city", "office", "work"}
	case "office", "work", "workplace":
		return []string{"location", "place", "job"}
	case "when", "date", "time":
		return []string{"timeline", "temporal", "session"}
	case "who", "person", "people":
		return []string{"user", "customer", "member"}
	case "roommate", "housemate":
		return []string{"person", "friend", "contact"}
	case "manager", "supervisor", "lead":
		return []string{"owner", "responsible", "contact"}
	case "name", "named", "called":
		return []string{"alias", "known"}
	case "pet", "dog", "cat":
		return []string{"animal", "name"}
	case "friend", "coworker", "colleague", "teammate":
		return []string{"person", "contact"}
	case "recommend", "recommended", "suggest", "suggested":
		return []string{"introduced", "referred", "because"}
	case "introduced", "referred":
		return []string{"recommended", "suggested"}
	case "travel", "trip", "flight":
		return []string{"itinerary", "journey", "airport"}
	case "remember", "recall", "remind":
		return []string{"mentioned", "said", "told", "note"}
	case "medication", "medicine", "meds", "prescription":
		return []string{"pill", "pharmacy", "doctor"}
	case "doctor", "physician", "clinic":
		return []string{"visit", "medical", "medication"}
	case "snack", "meal":
		return []string{"food", "preference"}
	case "gift", "present":
		return []string{"birthday", "surprise", "preference"}
	case "allergy", "allergic", "avoid":
		return []string{"restriction", "food", "without"}
	case "correction", "corrected", "correct":
		return []string{"changed", "updated", "replaced"}
	case "backup", "contact":
		return []string{"owner", "person", "responsible"}
	case "cancel", "cancelled", "canceled":
		return []string{"stopped", "dropped", "no longer"}

	// Added for conversational memory. Synonyms shorter than four letters
	// are avoided: matching is by substring, so "end" would fire inside
	// "friend".
	case "job", "jobs", "employer", "company", "hired":
		return []string{"work", "employer", "company", "office"}
	case "home", "house", "apartment", "live", "lives", "living":
		return []string{"home", "house", "apartment", "address"}
	case "car", "cars", "vehicle", "truck":
		return []string{"vehicle", "truck", "drive"}
	case "dentist", "hospital", "checkup":
		return []string{"doctor", "appointment", "medical"}
	case "vacation", "holiday":
		return []string{"trip", "travel", "flight"}
	case "puppy", "kitten", "animal":
		return []string{"animal", "puppy", "kitten"}
	case "price", "cost", "costs", "paid", "spent":
		return []string{"price", "cost", "amount", "paid"}
	case "buy", "bought", "buying", "purchased":
		return []string{"purchase", "order", "bought"}
	case "start", "started", "begin", "began":
		return []string{"started", "began", "begin"}
	case "finish", "finished", "ended", "completed":
		return []string{"finished", "completed", "ended"}
	case "birthday", "anniversary":
		return []string{"date", "party", "gift", "celebrate"}
	case "partner", "wife", "husband", "spouse":
		return []string{"partner", "wife", "husband", "spouse", "married"}
	}
	return nil
}
