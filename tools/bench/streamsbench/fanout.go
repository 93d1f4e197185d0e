package streamsbench

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// fanoutChannel is the channel the fanout workload publishes on.
const fanoutChannel = "ch"

// The payload of a fanout message starts with its sequence number and
// its send time (nanoseconds since the run's base time, read from the
// monotonic clock), both big-endian; random bytes fill the rest.
const stampBytes = 16

// subscriber is one connection subscribed to fanoutChannel, reading the
// messages and checking they are the publisher's, every one, in order.
type subscriber struct {
	c         *conn
	want      int
	received  int
	payload   []byte
	latencies []time.Duration
	last      time.Time
}

// subscribe sends SUBSCRIBE and reads its confirmation: once it is read,
// the server delivers every message published after.
func (s *subscriber) subscribe() error {
	v, err := s.c.do("SUBSCRIBE", fanoutChannel)
	if err != nil {
		return err
	}
	if len(v.elems) != 3 || string(v.elems[0].str) != "subscribe" || v.elems[2].n != 1 {
		return fmt.Errorf("SUBSCRIBE: unexpected confirmation %+v", v)
	}
	return nil
}

// loop reads s.want messages, recording each one's delivery latency.
func (s *subscriber) loop(base time.Time) error {
	var kind [16]byte
	for s.received < s.want {
		if err := s.expectHeader('*', 3); err != nil {
			return err
		}
		if err := s.readBulk(kind[:7]); err != nil || string(kind[:7]) != "message" {
			return fmt.Errorf("push %d is not a message: %q %w", s.received, kind[:7], err)
		}
		if err := s.readBulk(kind[:len(fanoutChannel)]); err != nil {
			return err
		}
		if err := s.readBulk(s.payload); err != nil {
			return err
		}
		now := time.Since(base)
		seq := binary.BigEndian.Uint64(s.payload)
		sent := time.Duration(binary.BigEndian.Uint64(s.payload[8:]))
		if seq != uint64(s.received) {
			return fmt.Errorf("message %d arrived where message %d was due", seq, s.received)
		}
		s.latencies = append(s.latencies, now-sent)
		s.received++
	}
	s.last = time.Now()
	return nil
}

func (s *subscriber) expectHeader(kind byte, n int) error {
	k, m, _, err := s.c.header()
	if err != nil {
		return err
	}
	if k != kind || m != int64(n) {
		return fmt.Errorf("message %d: got %c%d, want %c%d", s.received, k, m, kind, n)
	}
	return nil
}

// readBulk reads a bulk string of exactly len(dst) bytes into dst.
func (s *subscriber) readBulk(dst []byte) error {
	if err := s.expectHeader('$', len(dst)); err != nil {
		return err
	}
	return s.c.bulkBody(dst)
}

// publishAll sends n PUBLISH commands, depth at a time (written, then
// their replies read), each payload stamped with its sequence number and
// send time; every reply must count subs receivers. It returns when the
// first one was sent.
func publishAll(c *conn, n, depth, subs int, payload []byte, base time.Time) (time.Time, error) {
	first := time.Now()
	for sent := 0; sent < n; {
		batch := min(depth, n-sent)
		for j := range batch {
			binary.BigEndian.PutUint64(payload, uint64(sent+j))
			binary.BigEndian.PutUint64(payload[8:], uint64(time.Since(base)))
			c.writeArray(3)
			c.writeBulkString("PUBLISH")
			c.writeBulkString(fanoutChannel)
			c.writeBulk(payload)
		}
		if err := c.flush(); err != nil {
			return first, err
		}
		for j := range batch {
			got, err := c.readInt()
			if err != nil {
				return first, fmt.Errorf("PUBLISH %d: %w", sent+j, err)
			}
			if got != int64(subs) {
				return first, fmt.Errorf("PUBLISH %d reached %d subscribers, want %d", sent+j, got, subs)
			}
		}
		sent += batch
	}
	return first, nil
}

// runFanout is the fanout workload against a RESP server at addr:
// cfg.Subscribers connections subscribe to one channel, one more
// publishes n messages of cfg.MessageBytes at pipeline depth. The rate is
// deliveries (subscribers × n) over the time from the first send to the
// last delivery at the slowest subscriber; the latencies are of every
// delivery.
func runFanout(ctx context.Context, cfg Config, addr string, pid, depth, n int) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	subs, err := dialAll(ctx, addr, cfg.Subscribers)
	if err != nil {
		return result{}, err
	}
	defer closeAll(subs)
	pub, err := dial(ctx, addr)
	if err != nil {
		return result{}, err
	}
	defer pub.Close()
	ss := make([]*subscriber, len(subs))
	for i, c := range subs {
		ss[i] = &subscriber{c: c, want: n, payload: make([]byte, cfg.MessageBytes), latencies: make([]time.Duration, 0, n)}
		if err := ss[i].subscribe(); err != nil {
			return result{}, fmt.Errorf("subscriber %d: %w", i, err)
		}
	}
	payload := bytes.Clone(newRandomSource(cfg.Seed, 1<<33, cfg.MessageBytes).next(cfg.MessageBytes))
	cpu0, cpuErr := benchkit.ProcessCPU(pid)
	base := time.Now()
	errs := make([]error, len(ss))
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Go(func() { errs[i] = s.loop(base) })
	}
	first, err := publishAll(pub, n, depth, len(ss), payload, base)
	if err != nil {
		closeAll(subs)
		wg.Wait()
		return result{}, fmt.Errorf("publisher: %w", err)
	}
	if err := waitDelivered(&wg, subs, 30*time.Second); err != nil {
		return result{}, deliveryError(ss, errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return result{}, deliveryError(ss, errs, err)
	}
	return fanoutResult(ss, first, cpuSince(pid, cpu0, cpuErr, n*len(ss))), nil
}

// waitDelivered waits for the subscribers until timeout past the last
// publish; then it closes their connections, which ends their loops.
func waitDelivered(wg *sync.WaitGroup, subs []*conn, timeout time.Duration) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		closeAll(subs)
		<-done
		return fmt.Errorf("not every message was delivered %s after the last publish", timeout)
	}
}

// deliveryError says how far each subscriber got.
func deliveryError(ss []*subscriber, errs []error, err error) error {
	msg := ""
	for i, s := range ss {
		msg += fmt.Sprintf("; subscriber %d received %d of %d", i, s.received, s.want)
		if errs[i] != nil {
			msg += fmt.Sprintf(" (%v)", errs[i])
		}
	}
	return fmt.Errorf("fanout: %w%s", err, msg)
}

// fanoutResult sums the subscribers' figures.
func fanoutResult(ss []*subscriber, first time.Time, cpuUs float64) result {
	last, deliveries := first, 0
	var lat []time.Duration
	for _, s := range ss {
		deliveries += s.received
		lat = append(lat, s.latencies...)
		if s.last.After(last) {
			last = s.last
		}
	}
	seconds := last.Sub(first).Seconds()
	res := latencyResult(lat, seconds)
	res.Count, res.ServerCPUUs = deliveries, cpuUs
	return res
}
