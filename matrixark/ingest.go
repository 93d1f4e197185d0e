package matrixark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixark/embed"
	"github.com/temporalstore/temporalstore-go/matrixark/extract"
)

// Input is one source to ingest: a document (Body), a session's messages
// (Messages), or an event (Kind other than doc and chat, Body).
type Input struct {
	// Kind defaults to KindChat with Messages and KindDoc otherwise.
	Kind Kind
	// SourceID names the source: a document's id; for messages it
	// defaults to the session.
	SourceID string
	Title    string
	Body     string
	Messages []Message
	// The scope: a node belongs to a user, a session, an agent.
	User, Session, Agent string
	// TimeMs is the event time (default now); a message's own TimeMs
	// wins for it.
	TimeMs int64
	// Durable acknowledges after the Store's durable commit.
	Durable bool
	// Batch always writes the L1 summary; the live single-source path
	// writes it only for texts of 3 sentences or 180 words.
	Batch bool
}

// Message is one message of a conversation.
type Message struct {
	ID      string `json:"id,omitempty"`
	Role    string `json:"role"`
	Content string `json:"content"`
	Name    string `json:"name,omitempty"`
	TimeMs  int64  `json:"time_ms,omitempty"`
}

// IngestResult says what an ingest stored.
type IngestResult struct {
	Node     uint64 `json:"node_hash"`
	Events   int    `json:"events"`
	Entities int    `json:"entities"`
	// Duplicate: the same source and body were ingested before; nothing
	// was written.
	Duplicate bool `json:"duplicate,omitempty"`
	// EmbedDeferred: stored without vectors (the provider failed or the
	// tenant's Space declined them); lexically rankable until re-embedded.
	EmbedDeferred bool `json:"embed_deferred,omitempty"`
}

func (in *Input) validate() error {
	if in.Kind == 0 {
		in.Kind = KindDoc
		if len(in.Messages) > 0 {
			in.Kind = KindChat
		}
	}
	if _, ok := kindNames[in.Kind]; !ok {
		return fmt.Errorf("%w: kind %d", ErrInvalid, in.Kind)
	}
	if in.SourceID == "" && in.Kind == KindChat {
		in.SourceID = in.Session
	}
	for _, c := range []struct {
		what, v string
	}{{"user", in.User}, {"session", in.Session}, {"agent", in.Agent}} {
		if err := checkName(c.what, c.v, false); err != nil {
			return err
		}
	}
	switch {
	case in.SourceID == "":
		return fmt.Errorf("%w: source_id is required (or a session for messages)", ErrInvalid)
	case len(in.SourceID) > MaxRefBytes:
		return fmt.Errorf("%w: source_id longer than %d bytes", ErrInvalid, MaxRefBytes)
	case len(in.Title) > MaxTitleBytes:
		return fmt.Errorf("%w: title longer than %d bytes", ErrInvalid, MaxTitleBytes)
	case len(in.Body) > MaxTextBytes:
		return fmt.Errorf("%w: body longer than %d bytes", ErrInvalid, MaxTextBytes)
	case len(in.Messages) > MaxMessages:
		return fmt.Errorf("%w: more than %d messages", ErrInvalid, MaxMessages)
	case len(in.Messages) == 0 && strings.TrimSpace(in.Body) == "":
		return fmt.Errorf("%w: nothing to ingest: no body and no messages", ErrInvalid)
	}
	for i, m := range in.Messages {
		switch {
		case len(m.Content) > MaxTextBytes:
			return fmt.Errorf("%w: messages[%d] longer than %d bytes", ErrInvalid, i, MaxTextBytes)
		case len(m.ID) > MaxRefBytes:
			return fmt.Errorf("%w: messages[%d].id longer than %d bytes", ErrInvalid, i, MaxRefBytes)
		case len(m.Role) > MaxNameBytes || len(m.Name) > MaxNameBytes:
			return fmt.Errorf("%w: messages[%d] role or name longer than %d bytes", ErrInvalid, i, MaxNameBytes)
		}
	}
	return nil
}

// Ingest stores a source for tenant: its node (L0, L1), its L2 events
// (chunks, messages), its entities, and their vectors, in one atomic
// Apply. Ingesting the same source and body again is a no-op.
func (e *Engine) Ingest(ctx context.Context, t string, in Input) (IngestResult, error) {
	if err := checkName("tenant", t, true); err != nil {
		return IngestResult{}, err
	}
	if err := in.validate(); err != nil {
		return IngestResult{}, err
	}
	st, err := e.state(ctx, t)
	if err != nil {
		return IngestResult{}, err
	}
	now := e.o.Now().UnixMilli()
	at := in.TimeMs
	if at == 0 {
		at = now
	}
	nodeHash := NodeHash(t, in.Kind, in.SourceID)
	var all strings.Builder
	all.WriteString(in.Body)
	for _, m := range in.Messages {
		all.WriteString("\x00" + m.Role + "\x00" + m.Content)
	}
	srcKey := sourceKey(t, nodeHash, hashOf("event:"+in.SourceID+":"+all.String()))
	got, err := e.store.Get(ctx, [][]byte{srcKey, nodeKey(t, nodeHash)}, ReadOpts{})
	if err != nil {
		return IngestResult{}, err
	}
	res := IngestResult{Node: nodeHash}
	if got[0] != nil {
		res.Duplicate = true
		return res, nil
	}

	// The node: the one stored, or a new one.
	node := &Node{Hash: nodeHash, Kind: in.Kind, CanonicalName: in.Title, SourceRef: in.SourceID,
		User: in.User, Session: in.Session, Agent: in.Agent, FirstEventMs: at}
	if got[1] != nil {
		old := new(Node)
		if err := json.Unmarshal(got[1], old); err != nil {
			return res, fmt.Errorf("matrixark: node %d: %w", nodeHash, err)
		}
		*node = *old
	}
	if node.CanonicalName == "" {
		node.CanonicalName = in.SourceID
	}

	// The L2 events.
	var events []*Event
	add := func(text, ref, role, actor, record string, ms int64) {
		if strings.TrimSpace(text) == "" {
			return
		}
		events = append(events, &Event{
			ID: hashOf("event:" + ref + ":" + text), Node: nodeHash, EventMs: ms, IngestMs: now,
			Seq: e.nextSeq(), Role: role, ActorID: actor, Confidence: 1, Importance: importance(text),
			Text: text, SourceRef: ref, RecordType: record, Type: in.Kind.String(),
		})
	}
	var summaryText strings.Builder
	if len(in.Messages) > 0 {
		turn := int(node.Events)
		for _, m := range in.Messages {
			ref := m.ID
			if ref == "" {
				ref = in.SourceID + ":" + strconv.Itoa(turn)
			}
			ms := m.TimeMs
			if ms == 0 {
				ms = at
			}
			add(m.Content, ref, m.Role, m.Name, RecordRawMessage, ms)
			summaryText.WriteString(m.Content + "\n")
			turn++
		}
	} else if in.Kind == KindDoc {
		for i, c := range extract.Chunks(in.Body) {
			add(c.Text, in.SourceID+"#c"+strconv.Itoa(i), "", "", RecordMatchedChunk, at)
		}
		summaryText.WriteString(in.Body)
	} else {
		add(in.Body, in.SourceID, "", "", RecordRawMessage, at)
		summaryText.WriteString(in.Body)
	}
	if len(events) == 0 {
		return res, fmt.Errorf("%w: nothing to ingest: every text is empty", ErrInvalid)
	}

	// The summaries: a node's L0 is its first; its L1 follows what was
	// ingested last (a session's latest exchange).
	sum := extract.Summarize(in.Kind.String(), node.CanonicalName, summaryText.String())
	if node.L0 == "" {
		node.L0 = sum.L0
	}
	if in.Batch || sum.WantsL1() {
		node.L1 = sum.L1
	}
	node.Events += uint32(len(events))
	for _, ev := range events {
		node.LastEventMs = max(node.LastEventMs, ev.EventMs)
		node.FirstEventMs = min(node.FirstEventMs, ev.EventMs)
	}

	// Vectors, in one batch: L0, L1, then each event.
	if e.o.Embedder != nil {
		if err := e.embedIngest(ctx, t, node, events); err != nil {
			if e.o.AbortOnEmbedFailure || errors.Is(err, ErrModelRequired) {
				return res, err
			}
			e.o.Logger.Warn("embedding deferred", "tenant", t, "node", nodeHash, "err", err)
			res.EmbedDeferred = true
		}
	}

	// Entities: an upsert replaces the value and appends the source.
	ents := extract.Entities(summaryText.String())
	entKeys := make([][]byte, len(ents))
	for i, x := range ents {
		entKeys[i] = entityKey(t, nodeHash, x.Key)
	}
	olds, err := getAll(ctx, e.store, entKeys, ReadOpts{})
	if err != nil {
		return res, err
	}

	muts := &batch{m: make([]Mutation, 0, 2+len(events)+len(ents))}
	for i, x := range ents {
		rec := EntityRecord{Hash: x.Key, Node: nodeHash, Type: x.Type, Name: x.Name, Value: x.Value,
			UpdatedMs: now, ValidFrom: at, Confidence: 1}
		if olds[i] != nil {
			var old EntityRecord
			if json.Unmarshal(olds[i], &old) == nil {
				rec.Sources, rec.ValidFrom = old.Sources, old.ValidFrom
				if rec.Value == "" {
					rec.Value = old.Value
				}
			}
		}
		rec.Sources = append(rec.Sources, in.SourceID)
		if n := len(rec.Sources); n > MaxEntitySources {
			rec.Sources = rec.Sources[n-MaxEntitySources:]
		}
		muts.put(entityKey(t, nodeHash, x.Key), rec)
	}
	for _, ev := range events {
		muts.put(eventKey(t, nodeHash, ev.EventMs, ev.Seq), ev)
	}
	muts.put(nodeKey(t, nodeHash), node)
	muts.m = append(muts.m, Mutation{Key: srcKey, Value: []byte{1}})
	if muts.err != nil {
		return res, muts.err
	}
	if err := e.store.Apply(ctx, muts.m, WriteOpts{Durable: in.Durable}); err != nil {
		return res, err
	}

	st.mu.Lock()
	st.addNode(node)
	for _, ev := range events {
		st.addEvent(ev)
	}
	st.mu.Unlock()
	res.Events, res.Entities = len(events), len(ents)
	return res, nil
}

// embedIngest embeds a node's summaries and events in one call and sets
// their vectors, or marks the node dirty and returns why it could not.
func (e *Engine) embedIngest(ctx context.Context, t string, node *Node, events []*Event) error {
	texts := []string{node.L0, node.L1}
	for _, ev := range events {
		texts = append(texts, ev.Text)
	}
	if node.L1 == "" {
		texts[1] = node.L0
	}
	vecs, info, err := embed.EmbedWithInfo(ctx, e.o.Embedder, texts)
	if err == nil {
		_, err = e.spaces.Check(ctx, t, embed.SpaceOf(info))
	}
	if err != nil {
		node.EmbedDirty, node.VecL0, node.VecL1 = true, nil, nil
		return err
	}
	node.EmbedDirty = false
	node.VecL0 = vecs[0]
	if node.L1 != "" {
		node.VecL1 = vecs[1]
	}
	for i, ev := range events {
		ev.Vec = vecs[2+i]
	}
	return nil
}

// importance is 0.9 for a text about an incident, a customer or a risk,
// 0.5 otherwise.
func importance(text string) float64 {
	l := strings.ToLower(text)
	if strings.Contains(l, "incident") || strings.Contains(l, "customer") || strings.Contains(l, "risk") {
		return importanceHigh
	}
	return importanceBase
}

// batch gathers the mutations of one Apply, records encoded as JSON; the
// first encoding error stops it.
type batch struct {
	m   []Mutation
	err error
}

func (b *batch) put(k []byte, v any) {
	if b.err != nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		b.err = fmt.Errorf("matrixark: encoding %T: %w", v, err)
		return
	}
	b.m = append(b.m, Mutation{Key: k, Value: data})
}
