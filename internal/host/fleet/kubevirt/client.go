package kubevirt

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Bounds of the client. Everything the API server sends is hostile
// input: a compromised or confused server must not make guestcheck
// hold unbounded memory or wait forever.
const (
	// requestTimeout bounds one request, from dial to the last byte.
	requestTimeout = 30 * time.Second
	// maxPage bounds one page of a list (pageLimit objects of a few
	// KiB each).
	maxPage = 32 << 20
	// maxSmall bounds a single object (guestosinfo, an error Status).
	maxSmall = 1 << 20
	// maxToken bounds a token file.
	maxToken = 64 << 10
)

// ViewRole is the ClusterRole KubeVirt installs for reading its objects,
// which is all this source needs.
const ViewRole = "kubevirt.io:view"

// client is a read-only REST client for one API server. It writes one
// HTTP/1.1 request per TLS connection and reads the answer with
// http.ReadResponse: net/http's Transport (connection pools, HTTP/2,
// proxies) would add about 200 KiB to the guest's binary for nothing a
// few dozen sequential GETs need.
type client struct {
	base  *url.URL
	addr  string
	tls   *tls.Config
	token string
	// where names the server and the kubeconfig that named it, for an
	// error that reached no answer: which of an operator's clusters
	// refuses is the first thing to know.
	where string
}

// newClient builds the client for c: TLS to c's CA (the system's roots
// without one), its client certificate or token, no proxy, no redirect.
func newClient(c Config) (*client, error) {
	base, err := url.Parse(c.Server)
	if err != nil || base.Scheme != "https" || base.Host == "" {
		return nil, fmt.Errorf("server %q: not an https URL", c.Server)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.Insecure} //nolint:gosec // the kubeconfig's own choice
	if len(c.CAData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(c.CAData) {
			return nil, errors.New("certificate-authority: no PEM certificate in it")
		}
		tc.RootCAs = pool
	}
	if c.CertData != nil {
		cert, err := tls.X509KeyPair(c.CertData, c.KeyData)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %s", OneLine(strings.TrimPrefix(err.Error(), "tls: ")))
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	token := c.Token
	if token == "" && c.TokenFile != "" {
		b, err := readBounded(c.TokenFile, maxToken)
		if err != nil {
			return nil, fmt.Errorf("tokenFile %s: %w", c.TokenFile, err)
		}
		token = strings.TrimSpace(string(b))
	}
	addr := base.Host
	if base.Port() == "" {
		addr = net.JoinHostPort(base.Hostname(), "443")
	}
	tc.ServerName = base.Hostname()
	where := fmt.Sprintf("API server %s (kubeconfig %s", base.Redacted(), c.File)
	if c.Context != "" {
		where += ", context " + c.Context
	}
	return &client{base: base, addr: addr, tls: tc, token: token, where: where + ")"}, nil
}

// do sends req on a new TLS connection, within requestTimeout, and
// returns the answer, whose body is read until done closes the
// connection. A redirect is an answer like any other: following one
// could carry the token to another host.
func (c *client) do(ctx context.Context, req *http.Request) (*http.Response, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: c.tls}
	conn, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	dl, _ := ctx.Deadline()
	conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	done := func() { stop(); conn.Close(); cancel() }
	req.Close = true
	if err := req.Write(conn); err != nil {
		err = ctxError(ctx, err) // before done cancels ctx
		done()
		return nil, nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		err = ctxError(ctx, err) // before done cancels ctx
		done()
		return nil, nil, err
	}
	return resp, func() { resp.Body.Close(); done() }, nil
}

// ctxError is the context's error when it ended the request.
func ctxError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// apiError is an answer other than 200, with what to do about it.
type apiError struct {
	Code int
	Msg  string
}

func (e *apiError) Error() string { return e.Msg }

// get GETs path with query and decodes the JSON answer, at most max
// bytes, into into (a *json.RawMessage keeps it whole).
func (c *client) get(ctx context.Context, path string, query url.Values, max int64, into any) error {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, done, err := c.do(ctx, req)
	if err != nil {
		return fmt.Errorf("%s: GET %s: %s", c.where, path, transportError(err))
	}
	defer done()
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return fmt.Errorf("%s: GET %s: reading the answer: %s", c.where, path, transportError(ctxError(ctx, err)))
	}
	if int64(len(b)) > max {
		return fmt.Errorf("GET %s: the API server's answer is larger than %d MiB", path, max>>20)
	}
	if resp.StatusCode != http.StatusOK {
		return statusError(path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("GET %s: the answer is not the JSON expected: %s", path, jsonError(err))
	}
	return nil
}

// statusError turns an error answer into one line that says what to do.
func statusError(path string, code int, body []byte) error {
	var st struct {
		Message string `json:"message"`
	}
	json.Unmarshal(body, &st)
	msg := OneLine(st.Message)
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	if msg == "" {
		msg = http.StatusText(code)
	}
	var why string
	switch code {
	case http.StatusUnauthorized:
		why = "the API server does not accept the kubeconfig's credentials (401 Unauthorized): the token or client certificate is wrong or expired"
	case http.StatusForbidden:
		why = fmt.Sprintf("forbidden (403): %s; bind the ClusterRole %s to the account guestcheck uses (kubectl create clusterrolebinding guestcheck-fleet --clusterrole=%s --serviceaccount=NAMESPACE:NAME)", msg, ViewRole, ViewRole)
	case http.StatusNotFound:
		why = "not found (404): " + msg
	case http.StatusGone:
		why = "the list changed too much while it was read in pages (410 Gone): survey again"
	default:
		why = fmt.Sprintf("%d %s: %s", code, http.StatusText(code), msg)
	}
	return &apiError{Code: code, Msg: fmt.Sprintf("GET %s: %s", path, why)}
}

// transportError is a network error in words, without Go's wrapping.
func transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ce *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	switch {
	case errors.As(err, &ua) || errors.As(err, &ce):
		return "the server's certificate is not signed by the kubeconfig's certificate-authority: " + OneLine(err.Error())
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return "no answer in time"
	case errors.Is(err, context.Canceled):
		return "interrupted"
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		err = se.Err // "connect: connection refused" names Go's step
	}
	return OneLine(err.Error())
}

// jsonError is a decoding error in words: where, and what was wrong.
func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		f := te.Field
		if f == "" {
			f = "the document"
		}
		return fmt.Sprintf("%s is %s, not %s", f, article(te.Value), want(te.Type.Kind().String()))
	case errors.As(err, &se):
		return fmt.Sprintf("not JSON at byte %d", se.Offset)
	}
	return OneLine(err.Error())
}

func article(v string) string {
	switch v {
	case "object", "array":
		return "an " + v
	case "bool":
		return "true or false"
	case "number", "string":
		return "a " + v
	}
	return v
}

func want(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "a number"
}
