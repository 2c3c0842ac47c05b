package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func auditLine(stage, user, verb, resource, sub string, code int, at string) string {
	obj := ""
	if resource != "" {
		obj = `,"objectRef":{"resource":"` + resource + `","subresource":"` + sub + `","namespace":"bench"}`
	}
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"` + stage +
		`","requestURI":"/x","verb":"` + verb + `","user":{"username":"` + user + `"}` + obj +
		`,"responseStatus":{"code":` + strconv.Itoa(code) + `},"requestReceivedTimestamp":"` + at + `"}`
}

func TestAuditLogCountsByWindow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	lines := []string{
		auditLine("ResponseComplete", operatorUser, "patch", "deployments", "", 201, "2026-01-01T00:00:01.000000Z"),
		auditLine("ResponseComplete", operatorUser, "patch", "memcacheds", "status", 200, "2026-01-01T00:00:02.000000Z"),
		auditLine("ResponseComplete", operatorUser, "patch", "memcacheds", "status", 409, "2026-01-01T00:00:02.500000Z"),
		auditLine("ResponseComplete", operatorUser, "create", "events", "", 201, "2026-01-01T00:00:03.000000Z"),
		auditLine("ResponseComplete", operatorUser, "list", "pods", "", 200, "2026-01-01T00:00:03.000000Z"),
		auditLine("ResponseComplete", "someone-else", "patch", "deployments", "", 200, "2026-01-01T00:00:03.000000Z"),
		auditLine("ResponseStarted", operatorUser, "watch", "pods", "", 200, "2026-01-01T00:00:03.000000Z"),
		auditLine("ResponseComplete", operatorUser, "watch", "pods", "", 200, "2026-01-01T00:00:03.000000Z"),
		auditLine("ResponseStarted", operatorUser, "patch", "services", "", 200, "2026-01-01T00:00:03.000000Z"),
		auditLine("ResponseComplete", operatorUser, "update", "leases", "", 200, "2026-01-01T00:00:09.000000Z"),
	}
	// The last line is written in two parts, as a reader may find it.
	all := strings.Join(lines, "\n") + "\n"
	cut := len(all) - 20
	if err := os.WriteFile(path, []byte(all[:cut]), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newAuditLog(path)
	if err := a.read(); err != nil {
		t.Fatal(err)
	}
	if len(a.records) != 7 {
		t.Fatalf("after a partial write: %d records, want 7", len(a.records))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(all[cut:])
	_ = f.Close()
	if err := a.read(); err != nil {
		t.Fatal(err)
	}

	at := func(s string) time.Time { tt, _ := time.Parse(time.RFC3339, s); return tt }
	c := a.requests(at("2026-01-01T00:00:00Z"), at("2026-01-01T00:00:05Z"))
	want := requestCounts{
		"patch deployments": 1, "patch memcacheds/status": 2, "create events": 1, "list pods": 1, "watch pods": 1,
		"failed patch memcacheds/status 409": 1,
	}
	if c.String() != want.String() {
		t.Errorf("counts = %s\nwant     %s", c, want)
	}
	if w := c.writes(); w.total() != 4 {
		t.Errorf("writes = %s, want 4", w)
	}
	if w := c.writes("events"); w.total() != 3 {
		t.Errorf("writes without events = %s, want 3", w)
	}
	late := a.requests(at("2026-01-01T00:00:05Z"), at("2026-01-01T00:00:10Z"))
	if late.writes().only(leaseResource).total() != 1 || late.total() != 1 {
		t.Errorf("late window = %s, want one lease update", late)
	}
}

func TestAuditPolicyNamesTheOperator(t *testing.T) {
	p := auditPolicy()
	for _, s := range []string{operatorUser, markerNamespace, "level: None"} {
		if !strings.Contains(p, s) {
			t.Errorf("policy lacks %q:\n%s", s, p)
		}
	}
}
