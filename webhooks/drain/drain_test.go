package drain

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
)

func TestNotify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
	}{
		{name: "no delay", delay: 0},
		{name: "delay", delay: 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			signals := make(chan os.Signal, 2)
			exited := make(chan int, 1)
			ctx, d := notify(signals, tc.delay, logr.Discard(), func(code int) { exited <- code })
			g.Expect(d.Ready(nil)).To(Succeed(), "ready before the signal")

			start := time.Now()
			signals <- syscall.SIGTERM
			g.Eventually(func() error { return d.Ready(nil) }).WithTimeout(time.Second).WithPolling(time.Millisecond).
				Should(MatchError(errStopping), "not ready once SIGTERM is seen")
			g.Eventually(ctx.Done()).WithTimeout(tc.delay + 5*time.Second).Should(BeClosed())
			g.Expect(time.Since(start)).To(BeNumerically(">=", tc.delay), "the context outlives the delay")
			g.Expect(ctx.Err()).To(MatchError(context.Canceled))

			signals <- os.Interrupt
			g.Eventually(exited).WithTimeout(5*time.Second).Should(Receive(Equal(1)), "a second signal exits")
		})
	}
}

func TestSecondSignalDuringTheDelayExits(t *testing.T) {
	g := NewWithT(t)
	signals := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	ctx, _ := notify(signals, time.Hour, logr.Discard(), func(code int) { exited <- code })
	signals <- syscall.SIGTERM
	signals <- syscall.SIGTERM
	g.Eventually(exited).WithTimeout(5 * time.Second).Should(Receive(Equal(1)))
	g.Expect(ctx.Err()).NotTo(HaveOccurred(), "the process exits instead of stopping the manager")
}

// Over real HTTP: the answers keep the connection open until the signal,
// and ask the client to close it afterwards.
func TestHandlerClosesConnectionsOnceStopping(t *testing.T) {
	g := NewWithT(t)
	signals := make(chan os.Signal, 2)
	_, d := notify(signals, time.Hour, logr.Discard(), func(int) {})
	srv := httptest.NewServer(d.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "answer")
	})))
	t.Cleanup(srv.Close)
	call := func() *http.Response {
		resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader("{}"))
		g.Expect(err).NotTo(HaveOccurred())
		body, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(resp.Body.Close()).To(Succeed())
		g.Expect(string(body)).To(Equal("answer"))
		return resp
	}
	g.Expect(call().Close).To(BeFalse(), "kept alive before the signal")

	signals <- syscall.SIGTERM
	g.Eventually(func() error { return d.Ready(nil) }).WithTimeout(time.Second).WithPolling(time.Millisecond).Should(HaveOccurred())
	g.Expect(call().Close).To(BeTrue(), "closed after the answer once stopping")
}
