package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ErrNoPort is returned when no port below the ephemeral range could be
// bound after many tries.
var ErrNoPort = errors.New("freeport: no free loopback port below the ephemeral range")

// lowest is the first port Addr considers: below it lie well-known and
// commonly configured service ports.
const lowest = 10000

var (
	mu     sync.Mutex
	handed = map[int]bool{}
)

// Addr is "127.0.0.1:port" for a port nothing listens on now, outside the
// kernel's ephemeral range and not handed out before by this process.
func Addr() (string, error) {
	hi := ephemeralLow() - 1
	mu.Lock()
	defer mu.Unlock()
	for range 1000 {
		p := lowest + rand.IntN(hi-lowest+1)
		if handed[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l.Close()
		handed[p] = true
		return l.Addr().String(), nil
	}
	return "", ErrNoPort
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default when it cannot be read), never below lowest+1000 so that Addr
// has room to choose.
func ephemeralLow() int {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var a, z int
		if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &a, &z); err == nil {
			low = a
		}
	}
	return max(low, lowest+1000)
}
