package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// httpTimeout bounds one request to the server's HTTP API.
const httpTimeout = 30 * time.Second

// errHTTP is matched by every *httpError.
var errHTTP = errors.New("server refused the request")

// httpError is a reply of the server's HTTP API outside 2xx.
type httpError struct {
	Method, Path string
	Code         int
	// Status is the reply's status code word (not_found, table_exists...)
	// and Message its message, when the reply carries them.
	Status, Message string
}

func (e *httpError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Code)
	}
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Code, msg)
}

func (e *httpError) Is(target error) bool { return target == errHTTP }

// baseURL is the server's HTTP base URL: --http as host:port, or a URL.
func (a *app) baseURL() string {
	if strings.Contains(a.httpAddr, "://") {
		return strings.TrimSuffix(a.httpAddr, "/")
	}
	return "http://" + a.httpAddr
}

// call sends a request with the JSON of in (nil: no body) and decodes a 2xx
// reply's JSON into out (nil: discarded). It returns the status code.
func (a *app) call(ctx context.Context, method, path string, in, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.baseURL()+path, body)
	if err != nil {
		return 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode/100 != 2 {
		he := &httpError{Method: method, Path: path, Code: resp.StatusCode}
		// Error replies are a status {"ok", "code", "message"}, bare or
		// under "status".
		var st struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Status  *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"status"`
		}
		if json.Unmarshal(b, &st) == nil {
			he.Status, he.Message = st.Code, st.Message
			if st.Status != nil {
				he.Status, he.Message = st.Status.Code, st.Status.Message
			}
		} else {
			he.Message = strings.TrimSpace(string(b))
		}
		return resp.StatusCode, he
	}
	if out != nil && len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: reply: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}
