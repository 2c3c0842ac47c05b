package warmup

import (
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	rule := Rule{ItemsPercent: 50, HitRatioPoints: 5}
	// at is a pod that has served gets with the given hit ratio (percent)
	// over the window and holds items at its end.
	at := func(gets, hitPercent, items uint64) [2]Stats {
		hits := gets * hitPercent / 100
		return [2]Stats{{GetHits: 1000, GetMisses: 1000}, {GetHits: 1000 + hits, GetMisses: 1000 + gets - hits, Items: items}}
	}
	peers := [][2]Stats{at(500, 90, 1000), at(500, 90, 3000), at(500, 90, 2000)}
	for _, tt := range []struct {
		name   string
		w      Window
		warm   bool
		whyHas string
	}{
		{"no peers", Window{Pod: at(0, 0, 0)}, true, "no peers"},
		{"peers that hold nothing", Window{Pod: at(0, 0, 0), Peers: [][2]Stats{at(0, 0, 0), at(0, 0, 0)}}, true, "hold no items"},
		{"empty, serving misses", Window{Pod: at(500, 10, 0), Peers: peers}, false, "its hit ratio is 10% against its peers' 90%"},
		{"half the median's items", Window{Pod: at(500, 10, 1000), Peers: peers}, true, "1000 items, 50% of its peers' median 2000"},
		{"just under half", Window{Pod: at(500, 10, 999), Peers: peers}, false, "999 items"},
		{"hit ratio within the points", Window{Pod: at(500, 85, 10), Peers: peers}, true, "85% against its peers' 90%"},
		{"hit ratio just outside", Window{Pod: at(500, 84, 10), Peers: peers}, false, "84%"},
		{"too few gets to compare", Window{Pod: at(99, 90, 10), Peers: peers}, false, "99 gets to it are too few"},
		{"peers that barely serve", Window{Pod: at(0, 0, 0), Peers: [][2]Stats{at(49, 90, 1000), at(50, 90, 1000)}}, true, "its peers served 99 gets"},
		{"peers that serve just enough", Window{Pod: at(0, 0, 0), Peers: [][2]Stats{at(50, 90, 1000), at(50, 90, 1000)}}, false, "0 items"},
		{"a peer restarted: its counters went back", Window{Pod: at(500, 90, 10),
			Peers: [][2]Stats{{{GetHits: 5000}, {GetHits: 10, Items: 1000}}, at(500, 90, 1000)}}, true, "90% against its peers' 90%"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := rule.Judge(tt.w)
			if v.Warm != tt.warm || !strings.Contains(v.Why, tt.whyHas) {
				t.Errorf("Judge = %+v, want warm %v and a reason with %q", v, tt.warm, tt.whyHas)
			}
		})
	}
}

func TestNothingToCatchUp(t *testing.T) {
	for _, tt := range []struct {
		name    string
		peers   []Stats
		settled bool
		whyHas  string
	}{
		{"no peers", nil, true, "no peers"},
		{"peers that hold nothing", []Stats{{GetHits: 900}, {}}, true, "hold no items"},
		{"a median peer that holds nothing", []Stats{{}, {}, {Items: 10}}, true, "hold no items"},
		{"a median peer that holds items", []Stats{{}, {Items: 1}, {Items: 10}}, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, settled := NothingToCatchUp(tt.peers)
			if settled != tt.settled || (settled && !v.Warm) || !strings.Contains(v.Why, tt.whyHas) {
				t.Errorf("NothingToCatchUp = %+v, %v; want settled %v, warm, a reason with %q", v, settled, tt.settled, tt.whyHas)
			}
		})
	}
}
