package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/temporalstore/temporalstore-go/examples/internal/freeport"
)

// nullServerArg is the first argument that makes this program the null
// server rather than the demo.
const nullServerArg = "null-server"

// nullHistoryVerb sets how many impressions a null server's history reads
// return.
const nullHistoryVerb = "ADSNULL.HISTORY"

// nullServer answers every command a decision sends, on either backend's
// verbs, at once and without storing anything: a take always grants the
// first offer, a record is always new, and a history read returns history
// impressions of its campaigns (both set with ADSNULL.HISTORY n campaigns),
// one a millisecond back from the end of the window asked for.
// Running a backend's client code against it measures what the load
// generator alone allows with the same round trips and replies of the same
// size: the most any server could reach from this program.
type nullServer struct {
	history, campaigns atomic.Int64
}

// runNullServer serves on addr until ctx ends.
func runNullServer(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	s := &nullServer{}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Go(func() {
			defer c.Close()
			_ = s.serve(c)
		})
	}
}

// serve answers one connection's commands until it closes.
func (s *nullServer) serve(c net.Conn) error {
	r, w := bufio.NewReaderSize(c, 64<<10), bufio.NewWriterSize(c, 64<<10)
	var args [][]byte
	var buf []byte
	for {
		var err error
		if args, err = readCommand(r, args[:0]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		s.reply(w, args, &buf)
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// readCommand reads a RESP array of bulk strings into args.
func readCommand(r *bufio.Reader, args [][]byte) ([][]byte, error) {
	n, err := readHeader(r, '*')
	if err != nil {
		return nil, err
	}
	for range n {
		size, err := readHeader(r, '$')
		if err != nil {
			return nil, err
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args = append(args, b[:size])
	}
	return args, nil
}

// readHeader reads a "<prefix><n>\r\n" line.
func readHeader(r *bufio.Reader, prefix byte) (int, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 3 || line[0] != prefix {
		return 0, fmt.Errorf("%w: %q where %q was expected", ErrReply, line, prefix)
	}
	n, ok := atoi(line[1 : len(line)-2])
	if !ok || n > 1<<20 {
		return 0, fmt.Errorf("%w: header %q", ErrReply, line)
	}
	return int(n), nil
}

// reply writes the reply to one command: the shape the backends expect.
func (s *nullServer) reply(w *bufio.Writer, args [][]byte, buf *[]byte) {
	if len(args) == 0 {
		w.WriteString("-ERR empty command\r\n")
		return
	}
	num := func(i int) int64 {
		if i >= len(args) {
			return 0
		}
		n, _ := strconv.ParseInt(string(args[i]), 10, 64)
		return n
	}
	switch strings.ToUpper(string(args[0])) {
	case "PING":
		w.WriteString("+PONG\r\n")
	case "FLUSHALL":
		w.WriteString("+OK\r\n")
	case nullHistoryVerb:
		s.history.Store(max(0, num(1)))
		s.campaigns.Store(max(1, num(2)))
		w.WriteString("+OK\r\n")
	case "SCRIPT":
		w.WriteString("$40\r\n" + strings.Repeat("0", 40) + "\r\n")
	case "EVALSHA", "FAPPENDPOLICY", "ZADD":
		w.WriteString(":1\r\n")
	case "QUOTATAKE":
		w.WriteString("*3\r\n:1\r\n:1\r\n:0\r\n")
	case "FAGG", "ZCOUNT", "HSETANDGETOPT", "CONTROLSTATEINCR", "HQUERY":
		w.WriteString(":0\r\n")
	case "MGET":
		w.WriteString("*" + strconv.Itoa(len(args)-1) + "\r\n")
		for range len(args) - 1 {
			w.WriteString("$-1\r\n")
		}
	case "FQUERY":
		s.writeHistory(w, buf, num(3), false)
	case "ZRANGEBYSCORE":
		s.writeHistory(w, buf, num(3), true)
	default:
		w.WriteString("-ERR unknown command '" + string(args[0]) + "'\r\n")
	}
}

// writeHistory writes the history's impressions ending at end, one a
// millisecond back from it, of campaigns 0, 1, ...: as FQUERY's [time,
// "campaign:charge"] pairs, or as ZRANGEBYSCORE's "campaign:charge:time"
// members. buf is reused from one reply to the next.
func (s *nullServer) writeHistory(w *bufio.Writer, buf *[]byte, end int64, members bool) {
	n, campaigns := s.history.Load(), max(1, s.campaigns.Load())
	b := append((*buf)[:0], '*')
	b = strconv.AppendInt(b, n, 10)
	b = append(b, "\r\n"...)
	for i := range n {
		at := end - i
		if !members {
			b = append(b, "*2\r\n:"...)
			b = strconv.AppendInt(b, at, 10)
			b = append(b, "\r\n"...)
		}
		// The value's length comes first: "campaign:12345[:time]".
		size := digits(i%campaigns) + 6
		if members {
			size += 1 + digits(at)
		}
		b = append(b, '$')
		b = strconv.AppendInt(b, size, 10)
		b = append(b, "\r\n"...)
		b = strconv.AppendInt(b, i%campaigns, 10)
		b = append(b, ":12345"...)
		if members {
			b = append(b, ':')
			b = strconv.AppendInt(b, at, 10)
		}
		b = append(b, "\r\n"...)
	}
	w.Write(b)
	*buf = b
}

// digits is how many decimal digits n, not negative, has.
func digits(n int64) int64 {
	d := int64(1)
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// NullCeiling is a backend's client code run against the null server: the
// decisions a second the load generator allows with that backend's round
// trips and replies, whatever the server.
type NullCeiling struct {
	Backend string `json:"backend"`
	Repeat  int    `json:"repeat"`
	// History is the impressions each history read returned: the mean of
	// the backend's day this follows.
	History     int64   `json:"history_points"`
	PerSecond   float64 `json:"decisions_per_s"`
	ServerCPUus float64 `json:"server_cpu_us_per_decision,omitempty"`
	ClientCPUus float64 `json:"client_cpu_us_per_decision"`
}

// startNullServer runs this program as a null server on cpus (taskset,
// when not empty), its output in dir.
func (s *servers) startNullServer(ctx context.Context, dir, cpus string) (string, error) {
	bin, err := os.Executable()
	if err != nil {
		return "", err
	}
	addr, err := freeport.Addr()
	if err != nil {
		return "", err
	}
	p, err := startProcess(ctx, dir, "null-server", cpus, addr, bin, nullServerArg, addr)
	if err != nil {
		return "", err
	}
	s.add("null", p)
	return addr, nil
}

// measureNullCeiling runs w's decisions with backend name's client code
// against the null server at addr, its history reads history impressions
// long.
func measureNullCeiling(ctx context.Context, name, addr string, history int64, cat *Catalog, w *Workload, cfg runConfig) (NullCeiling, error) {
	c := NullCeiling{Backend: name, History: history}
	rc := newClient(addr, 1)
	err := rc.Do(ctx, nullHistoryVerb, history, len(cat.Campaigns)).Err()
	rc.Close()
	if err != nil {
		return c, fmt.Errorf("null server: %w", err)
	}
	var b Backend
	conns := cfg.clients + 2
	switch name {
	case "ours":
		b = newOurs(addr, conns)
	case "redis":
		b = newRedis(addr, conns)
	default:
		return c, fmt.Errorf("%w: no null ceiling for %s", ErrOptions, name)
	}
	defer b.Close()
	cfg.noCheck = true
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	res, err := serve(ctx, quiet, b, name+" on the null server", cat, w, cfg)
	if err != nil {
		return c, err
	}
	c.PerSecond, c.ServerCPUus, c.ClientCPUus = res.PerSecond, res.ServerCPUus, res.ClientCPUus
	return c, nil
}

// nullServerMain is main for the null server: args are its address.
func nullServerMain(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%w: usage: ads-demo %s host:port", ErrOptions, nullServerArg)
	}
	return runNullServer(ctx, args[0])
}
