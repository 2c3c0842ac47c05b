package controllers_test

import (
	"bytes"
	"strings"
	"sync"
)

// logRecorder keeps every line the operator logs, so that specs can assert
// how often something was logged, not only that it was.
type logRecorder struct {
	mu      sync.Mutex
	lines   []string
	partial bytes.Buffer
}

// Write stores p's complete lines; zap writes one entry per call.
func (l *logRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial.Write(p)
	for {
		line, err := l.partial.ReadString('\n')
		if err != nil {
			// No newline yet: keep the start for the next write.
			l.partial.Reset()
			l.partial.WriteString(line)
			return len(p), nil
		}
		l.lines = append(l.lines, strings.TrimSuffix(line, "\n"))
	}
}

// matching returns the lines that contain every one of substrings.
func (l *logRecorder) matching(substrings ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range l.lines {
		for _, s := range substrings {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}
