package contextbench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// The shape of the synthetic corpus.
const (
	minMessages   = 4 // messages of a session, user and assistant alternating
	maxMessages   = 8
	turnGapMs     = 30_000
	corpusStartMs = 1_735_689_600_000 // 2025-01-01T00:00:00Z
	dayMs         = 86_400_000
	historyDays   = 365 // a user's sessions are spread over a year
	singleFacts   = 7   // fact families planted per user, of the single ones
	splitFacts    = 2   // two-session facts planted per user
	nearMisses    = 6   // sessions stating another person's value of a family
	updateChance  = 0.5 // of an updatable fact, that a later session changes it
)

// MinSessionsPerUser is the fewest sessions a user can have: one for each
// fact, update, half of a two-session fact and near miss.
const MinSessionsPerUser = 2*singleFacts + 2*splitFacts + nearMisses

// Corpus is a deterministic synthetic conversation history with known
// evidence: users, their dated sessions, and the queries whose answers were
// planted in given messages.
type Corpus struct {
	Sessions []Session
	Queries  []Query
	Users    int
	Messages int
}

// Session is one conversation: one node once ingested.
type Session struct {
	ID, User string
	TimeMs   int64
	Messages []Message
}

// Message is one turn; its ID is the source_ref retrieval returns.
type Message struct {
	ID, Role, Content string
	TimeMs            int64
}

// Query kinds.
const (
	KindSingle  = "single"  // a fact stated once
	KindUpdated = "updated" // a fact stated, then changed in a later session
	KindSplit   = "split"   // a fact whose two halves are in two sessions
)

// Query is a question a user asks after all their sessions, with the ids
// of the messages that answer it. Stale holds, for an updated fact, the
// message of the older value: a distractor, never evidence.
type Query struct {
	ID, User, Text, Kind string
	Evidence             []string
	Stale                []string `json:",omitempty"`
}

// family is one kind of planted fact: an attribute of an entity, the ways
// a user states it, changes it and asks about it, and what another person's
// value of it sounds like (a near miss).
//
// Templates fill {v} (the value), {old} (the value before an update), {x}
// (the entity, e.g. a project or a sister, when the family has extras) and
// {n} (another person, in near misses).
type family struct {
	name      string
	values    []string
	extras    []string
	state     []string
	update    []string // empty: the fact never changes
	questions []string
	nearMiss  []string
}

var families = []family{
	{
		name:   "office.city",
		values: []string{"Porto", "Lyon", "Denver", "Osaka", "Tallinn", "Leeds", "Austin", "Gdansk", "Valencia", "Hamburg", "Quito", "Perth", "Bergen", "Calgary"},
		state: []string{
			"Quick context before my question: my office is in {v}, right by the river.",
			"I work out of the {v} office, so my mornings start early.",
			"Since I joined the company I have been based at our {v} office.",
		},
		update: []string{
			"Big news, they transferred me and my office is now in {v}.",
			"We relocated last month, so I am working from the {v} office instead of {old}.",
		},
		questions: []string{"Where do I work now?", "Which city is my office in these days?", "What city am I based in for my job at the moment?"},
		nearMiss: []string{
			"My colleague {n} works from the {v} office and keeps inviting me over.",
			"{n} told me their office in {v} is getting renovated.",
		},
	},
	{
		name:   "dog.name",
		values: []string{"Rex", "Biscuit", "Luna", "Pepper", "Mochi", "Ziggy", "Waffles", "Pickle", "Bruno", "Olive", "Tango", "Clementine"},
		state: []string{
			"My dog is called {v} and he is obsessed with tennis balls.",
			"We finally got a puppy! We named her {v}.",
			"Walking {v}, my beagle, takes most of my evening.",
		},
		questions: []string{"What's my dog's name?", "What did we name the puppy?", "What is my beagle called?"},
		nearMiss: []string{
			"My neighbour {n} has a dog called {v} that barks all night.",
			"{n}'s puppy {v} chewed through my shoelaces.",
		},
	},
	{
		name:   "project.deadline",
		values: []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the 14th", "the 21st", "the end of the month", "March 3", "April 18"},
		extras: []string{"Atlas", "Beacon", "Cobalt", "Driftwood", "Ember", "Falcon", "Granite", "Harbor", "Keystone", "Lantern", "Meridian", "Nimbus"},
		state: []string{
			"The {x} project is due on {v}, so I am a bit stressed.",
			"Our deadline for {x} is {v}.",
		},
		update: []string{
			"Heads up: the {x} deadline moved to {v}.",
			"They pushed the {x} due date, it is {v} now instead of {old}.",
		},
		questions: []string{"When is {x} due?", "What's the current deadline for the {x} project?", "By when do I need to finish {x}?"},
		nearMiss: []string{
			"{n}'s team has to ship their project by {v}.",
			"My teammate {n} has a hard deadline on {v} for a different project.",
		},
	},
	{
		name:   "manager",
		values: []string{"Dana Whitfield", "Omar Haddad", "Priya Natarajan", "Lukas Berger", "Mei Tanaka", "Carlos Mendes", "Ingrid Olsen", "Samuel Okafor", "Hannah Kowalski", "Ravi Shah"},
		state: []string{
			"My manager is {v}; our one-on-ones are on Mondays.",
			"I report to {v} on the platform team.",
		},
		update: []string{
			"{old} left the company, so {v} is my manager now.",
			"Reorg happened: I now report to {v} instead of {old}.",
		},
		questions: []string{"Who is my boss at the moment?", "Who do I report to?", "Who's my current manager?"},
		nearMiss: []string{
			"{n} reports to {v}, who seems great.",
			"My friend {n} says their manager {v} is very strict.",
		},
	},
	{
		name:   "car",
		values: []string{"blue Corolla", "red Civic", "grey Model 3", "green Outback", "white Golf", "black Mazda 3", "silver Prius", "yellow Mini"},
		state: []string{
			"I drive a {v}, which is great on gas.",
			"My car is a {v} and it needs new tyres.",
		},
		update: []string{
			"I sold the old {old} and bought a {v}.",
			"We traded in the car, I am driving a {v} now.",
		},
		questions: []string{"What car do I have now?", "What am I driving these days?", "Which vehicle do I own?"},
		nearMiss:  []string{"{n} just bought a {v} and won't stop talking about it."},
	},
	{
		name:   "allergy",
		values: []string{"peanuts", "shellfish", "sesame", "kiwi", "gluten", "almonds", "eggs", "soy"},
		state: []string{
			"I'm allergic to {v}, so please keep that in mind for recipes.",
			"Reminder: I react badly to {v}, so I avoid it completely.",
		},
		questions: []string{"Which food should I avoid in recipes?", "What am I allergic to?", "Is there an ingredient I can't eat?"},
		nearMiss:  []string{"{n} is allergic to {v}, so we skip it at dinner parties."},
	},
	{
		name:   "class.day",
		values: []string{"Monday mornings", "Tuesday evenings", "Wednesday at 7", "Thursday lunchtime", "Saturday mornings", "Sunday afternoons"},
		state: []string{
			"I go to spin class on {v}.",
			"My spin class is {v} at the gym downtown.",
		},
		update: []string{
			"I switched spin class to {v}.",
			"The gym changed the schedule, spin is on {v} now.",
		},
		questions: []string{"When is my spin class?", "Which day do I go cycling at the gym?", "What time is my workout class?"},
		nearMiss:  []string{"{n} goes to yoga on {v}."},
	},
	{
		name:   "sister.city",
		values: []string{"Denver", "Madrid", "Nairobi", "Toronto", "Seoul", "Dublin", "Lisbon", "Boston", "Krakow", "Auckland"},
		extras: []string{"Ana", "Beth", "Clara", "Dora", "Elena", "Fiona", "Greta", "Iris"},
		state: []string{
			"My sister {x} lives in {v} with her two kids.",
			"{x}, my older sister, has lived in {v} for years.",
		},
		update: []string{
			"{x} just moved to {v} for a new job.",
			"My sister relocated from {old} to {v}.",
		},
		questions: []string{"Where does my sister live?", "Which city is {x} in now?", "Where is my sister based these days?"},
		nearMiss:  []string{"My cousin {n} lives in {v}."},
	},
	{
		name:   "coffee",
		values: []string{"flat white", "oat latte", "cortado", "double espresso", "cappuccino", "iced americano", "chai latte"},
		state: []string{
			"My usual coffee order is a {v}.",
			"I always get a {v} at the café near work.",
		},
		update:    []string{"I've cut back, I order a {v} now."},
		questions: []string{"What do I usually order at the café?", "What's my go-to coffee?", "What drink do I get every morning?"},
		nearMiss:  []string{"{n} always orders a {v}."},
	},
	{
		name:   "partner.birthday",
		values: []string{"March 12", "June 3", "August 27", "October 9", "January 30", "May 15", "November 21"},
		extras: []string{"Maya", "Jonas", "Leah", "Theo", "Nina", "Sam", "Rosa", "Eli"},
		state: []string{
			"{x}'s birthday is on {v}, I need to plan something.",
			"My partner {x} turns thirty on {v}.",
		},
		questions: []string{"When is {x}'s birthday?", "What date do I need to plan my partner's birthday for?", "When does my partner celebrate their birthday?"},
		nearMiss:  []string{"{n}'s birthday is on {v} too, funny coincidence."},
	},
	{
		name:   "language",
		values: []string{"Portuguese", "Japanese", "Korean", "Dutch", "Italian", "Mandarin", "Turkish", "Greek"},
		state: []string{
			"I'm learning {v} on weekday evenings.",
			"I started {v} lessons online.",
		},
		update: []string{
			"I dropped {old} and started {v} instead.",
			"I switched my evening lessons to {v}.",
		},
		questions: []string{"What language am I studying at the moment?", "Which language lessons am I taking?", "What am I learning in the evenings?"},
		nearMiss:  []string{"{n} is learning {v} for a trip."},
	},
}

// split is a fact told over two sessions: the question needs both halves.
// Each half fills {a} and {b} from its own pool.
type split struct {
	name      string
	a, b      []string // pools of {a} and {b}
	first     []string
	second    []string
	questions []string
}

var splits = []split{
	{
		name: "trip",
		a:    []string{"Lisbon", "Singapore", "Montreal", "Prague", "Cape Town", "Vancouver", "Athens", "Kyoto"},
		b:    []string{"June 3 at 9am", "July 14 at noon", "September 2 at 6am", "October 21 at 3pm", "May 8 at 11am"},
		first: []string{
			"I booked a trip to {a} for the industry conference.",
			"The conference this year is in {a}, and I'm going.",
		},
		second: []string{
			"The flight for the conference leaves on {b}.",
			"My conference flight is on {b}, I need to pack early.",
		},
		questions: []string{"When and where am I flying for the conference?", "What are the details of my conference trip?"},
	},
	{
		name: "bookclub",
		a:    []string{"The Overstory", "Piranesi", "Middlemarch", "Klara and the Sun", "The Remains of the Day", "Beloved", "Stoner"},
		b:    []string{"Lena's place", "Marco's flat", "the library cafe", "Tom's garden", "Ayesha's house"},
		first: []string{
			"Our book club picked {a} for this month.",
			"For book club we are reading {a} next.",
		},
		second: []string{
			"Book club meets at {b} this time.",
			"This month's book club is hosted at {b}.",
		},
		questions: []string{"What are we reading for book club and where do we meet?", "Remind me of this month's book club book and venue."},
	},
	{
		name: "flat",
		a:    []string{"Elm Street", "Harbour Road", "Mill Lane", "Station Avenue", "Queens Walk", "Orchard Close"},
		b:    []string{"1,450 euros", "1,900 dollars", "980 pounds", "2,300 dollars", "1,200 euros"},
		first: []string{
			"We signed the lease on a flat on {a}.",
			"We are moving into a place on {a} next month.",
		},
		second: []string{
			"Rent for the new flat is {b} a month.",
			"The new apartment costs us {b} a month.",
		},
		questions: []string{"Where is our new flat and how much is the rent?", "What's the address and monthly cost of the apartment we're moving into?"},
	},
	{
		name: "cat",
		a:    []string{"Riverside", "Northgate", "Hillcrest", "Maple", "Seaview"},
		b:    []string{"Miso", "Pudding", "Saffron", "Noodle", "Ginger", "Basil"},
		first: []string{
			"We adopted a cat from the {a} animal shelter.",
			"We brought home a rescue cat from {a} shelter today.",
		},
		second: []string{
			"The cat from the shelter is named {b}.",
			"We decided to call the new kitten {b}.",
		},
		questions: []string{"What did we call the cat we adopted, and where did it come from?", "What's our rescue cat's name and which shelter was it from?"},
	},
}

// people fill {n}: the other persons of near misses.
var people = []string{"Jordan", "Alex", "Kim", "Morgan", "Tariq", "Sofia", "Hugo", "Ines", "Yuki", "Pablo", "Zara", "Felix"}

// topic is a subject of everyday conversation: what distractor sessions
// are about and what fact sessions are about around the fact itself.
type topic struct {
	fill []string // {t}
	user []string
	bot  []string
}

var topics = []topic{
	{
		fill: []string{"lasagne", "a Thai green curry", "banana bread", "shakshuka", "mushroom risotto", "a lentil soup"},
		user: []string{"Can you give me a recipe for {t}?", "How long does {t} take to make?", "What can I substitute in {t} if I have no cream?", "Is {t} easy to freeze?"},
		bot:  []string{"Sure, here is a simple version with pantry ingredients.", "Plan for about forty minutes including prep.", "Yes, it keeps well for up to three months frozen.", "You can use yoghurt or coconut milk instead."},
	},
	{
		fill: []string{"Iceland", "Vietnam", "Scotland", "Morocco", "Patagonia", "Sicily"},
		user: []string{"Is it worth visiting {t} in the autumn?", "What should I pack for a week in {t}?", "How many days do I need to see {t} properly?", "Any food I must try in {t}?"},
		bot:  []string{"Autumn is quieter and prices drop, so it can be a good time.", "Layers and a waterproof jacket are the safe choice.", "A week covers the highlights without rushing.", "Try the local street food and the regional specialities."},
	},
	{
		fill: []string{"Severance", "The Bear", "Slow Horses", "Shogun", "Andor", "Succession"},
		user: []string{"I just finished watching {t}, any similar recommendations?", "Is the second season of {t} as good as the first?", "Who wrote {t}?", "Should I rewatch {t} before the new season?"},
		bot:  []string{"If you liked it, try a slow-burn drama with a strong ensemble.", "Most reviews say the second season holds up.", "A quick recap video is usually enough before a new season.", "It is worth it if you like character-driven stories."},
	},
	{
		fill: []string{"5", "8", "10", "12", "15", "21"},
		user: []string{"I ran {t} km today, is that good progress?", "How do I build up to running {t} km without getting injured?", "What pace should I aim for on a {t} km run?", "My knees ache after {t} km, what should I change?"},
		bot:  []string{"Increase your weekly distance by about ten percent at most.", "Keep most runs at a conversational pace.", "Strength work for hips and calves helps a lot with knee pain.", "That is solid progress, keep the easy days easy."},
	},
	{
		fill: []string{"rent", "groceries", "savings", "a holiday fund", "streaming subscriptions", "eating out"},
		user: []string{"How much of my salary should go to {t}?", "Any tips to spend less on {t}?", "Should I track {t} in a spreadsheet or an app?", "Is it normal that {t} takes a third of my budget?"},
		bot:  []string{"A common rule of thumb is fifty, thirty, twenty.", "Reviewing the last three months of statements is a good start.", "Either works; the best tool is the one you keep using.", "Automating a fixed transfer on payday makes it easier."},
	},
	{
		fill: []string{"tomato plants", "basil", "monstera", "orchid", "lemon tree", "succulents"},
		user: []string{"My {t} leaves are turning yellow, what should I do?", "How often should I water my {t}?", "When is the best time to repot {t}?", "Do {t} need full sun?"},
		bot:  []string{"Yellow leaves often mean overwatering, so let the soil dry out.", "Water when the top few centimetres of soil are dry.", "Spring is the best time to repot most plants.", "Bright indirect light suits most of them."},
	},
	{
		fill: []string{"laptop fan", "wifi router", "phone battery", "printer", "bluetooth headphones", "smart TV"},
		user: []string{"My {t} is acting up again, any ideas?", "How do I reset my {t}?", "Is it worth repairing my {t} or should I replace it?", "Why does my {t} keep disconnecting?"},
		bot:  []string{"Try turning it off and on again and updating the firmware.", "Hold the reset button for about ten seconds.", "If it is more than five years old, replacing it is often cheaper.", "Interference from other devices is a common cause."},
	},
	{
		fill: []string{"mould in the bathroom", "a squeaky door", "a dripping tap", "a drafty window", "limescale on the kettle", "a blocked sink"},
		user: []string{"How do I deal with {t}?", "Is {t} something I can fix myself?", "What tools do I need for {t}?", "How much would a handyman charge for {t}?"},
		bot:  []string{"Most people can handle that with basic tools and an hour.", "Vinegar and a bit of patience go a long way.", "A handyman usually charges a call-out fee plus an hourly rate.", "Make sure to ventilate the room while you work on it."},
	},
}

var fillers = []string{"Thanks, that helps.", "Makes sense.", "Okay, I'll try that tonight.", "Good to know.", "Perfect, thank you!", "Hmm, let me think about it."}

var acks = []string{"Thanks for letting me know, I'll keep that in mind.", "Noted!", "Got it.", "Good to know, thanks for sharing."}

// fill replaces each {key} of s.
func fill(s string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(s)
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// pickOther is an element of xs other than not (xs holds at least two).
func pickOther(r *rand.Rand, xs []string, not string) string {
	for {
		if v := pick(r, xs); v != not {
			return v
		}
	}
}

// plant is a fact sentence to put into one of a user's sessions, with the
// query it answers (or helps answer) and its role there.
type plant struct {
	text  string
	query int  // index into the user's queries
	stale bool // the older value of an updated fact
}

// Generate builds a corpus of users×sessionsPerUser sessions (nodes) and
// picks queries of them, all from seed. A user's sessions and queries
// depend only on the seed and the user's index, so a smaller corpus is the
// first users of a larger one. queries ≤ 0 keeps every query.
func Generate(seed uint64, users, sessionsPerUser, queries int) Corpus {
	c := Corpus{Users: users}
	var all []Query
	for u := range users {
		ss, qs := generateUser(seed, u, sessionsPerUser)
		c.Sessions = append(c.Sessions, ss...)
		all = append(all, qs...)
	}
	for _, s := range c.Sessions {
		c.Messages += len(s.Messages)
	}
	if queries > 0 && queries < len(all) {
		r := rand.New(rand.NewPCG(seed, 1<<63))
		idx := r.Perm(len(all))[:queries]
		slices.Sort(idx)
		picked := make([]Query, 0, queries)
		for _, i := range idx {
			picked = append(picked, all[i])
		}
		all = picked
	}
	c.Queries = all
	return c
}

// generateUser makes one user's sessions, oldest first, and the queries
// their planted facts answer.
func generateUser(seed uint64, u, sessions int) ([]Session, []Query) {
	r := rand.New(rand.NewPCG(seed, uint64(u)))
	user := fmt.Sprintf("u%05d", u)
	var queries []Query
	var plants [][]plant // one per fact session, in the order they must appear

	// Single facts, some updated later.
	for _, fi := range r.Perm(len(families))[:singleFacts] {
		f := families[fi]
		x := ""
		if len(f.extras) > 0 {
			x = pick(r, f.extras)
		}
		v := pick(r, f.values)
		q := Query{User: user, Kind: KindSingle, Text: fill(pick(r, f.questions), "{x}", x)}
		first := plant{text: fill(pick(r, f.state), "{v}", v, "{x}", x), query: len(queries)}
		if len(f.update) > 0 && r.Float64() < updateChance {
			nv := pickOther(r, f.values, v)
			q.Kind = KindUpdated
			first.stale = true
			second := plant{text: fill(pick(r, f.update), "{v}", nv, "{old}", v, "{x}", x), query: len(queries)}
			plants = append(plants, []plant{first, second})
		} else {
			plants = append(plants, []plant{first})
		}
		queries = append(queries, q)
	}
	// Two-session facts.
	for _, si := range r.Perm(len(splits))[:splitFacts] {
		s := splits[si]
		a, b := pick(r, s.a), pick(r, s.b)
		plants = append(plants, []plant{
			{text: fill(pick(r, s.first), "{a}", a, "{b}", b), query: len(queries)},
			{text: fill(pick(r, s.second), "{a}", a, "{b}", b), query: len(queries)},
		})
		queries = append(queries, Query{User: user, Kind: KindSplit, Text: pick(r, s.questions)})
	}
	// Near misses: another person's value of a family, no query.
	var misses []string
	for _, fi := range r.Perm(len(families))[:nearMisses] {
		f := families[fi]
		misses = append(misses, fill(pick(r, f.nearMiss), "{v}", pick(r, f.values), "{n}", pick(r, people)))
	}

	// Place the fact sessions, one fact or near miss a session at most:
	// each chain's sessions at increasing positions, so an update always
	// comes after what it changes.
	slots := r.Perm(sessions)
	next := 0
	plantAt := map[int]plant{}
	for _, chain := range plants {
		pos := slots[next : next+len(chain)]
		next += len(chain)
		slices.Sort(pos)
		for i, p := range chain {
			plantAt[pos[i]] = p
		}
	}
	missAt := map[int]string{}
	for _, m := range misses {
		missAt[slots[next]] = m
		next++
	}

	// Session times: sorted random minutes of the year.
	times := make([]int64, sessions)
	for i := range times {
		times[i] = corpusStartMs + int64(r.IntN(historyDays))*dayMs + int64(r.IntN(24*60))*60_000
	}
	slices.Sort(times)

	out := make([]Session, sessions)
	for i := range out {
		s := Session{ID: fmt.Sprintf("%s-s%03d", user, i), User: user, TimeMs: times[i]}
		tp := pick(r, topics)
		n := minMessages + r.IntN(maxMessages-minMessages+1)
		// The user turn that carries the session's fact or near miss, if
		// it has one: dropped in passing, as people do.
		special, p, isFact := "", plantAt[i], false
		if p.text != "" {
			special, isFact = p.text, true
		} else if m, ok := missAt[i]; ok {
			special = m
		}
		turn := r.IntN((n + 1) / 2)
		for k := range n {
			m := Message{ID: fmt.Sprintf("%s-m%d", s.ID, k), TimeMs: s.TimeMs + int64(k)*turnGapMs}
			switch {
			case k%2 == 0 && special != "" && k/2 == turn:
				m.Role, m.Content = "user", special
				if isFact {
					q := &queries[p.query]
					if p.stale {
						q.Stale = append(q.Stale, m.ID)
					} else {
						q.Evidence = append(q.Evidence, m.ID)
					}
				}
			case k%2 == 0 && (k == 0 || r.IntN(3) > 0):
				m.Role, m.Content = "user", fill(pick(r, tp.user), "{t}", pick(r, tp.fill))
			case k%2 == 0:
				m.Role, m.Content = "user", pick(r, fillers)
			case special != "" && (k-1)/2 == turn:
				m.Role, m.Content = "assistant", pick(r, acks)
			default:
				m.Role, m.Content = "assistant", pick(r, tp.bot)
			}
			s.Messages = append(s.Messages, m)
		}
		out[i] = s
	}
	for i := range queries {
		queries[i].ID = fmt.Sprintf("%s-q%d", user, i)
	}
	return out, queries
}
