package warmup

import (
	"fmt"
	"slices"
)

// minGets is how many gets a pod, and its peers together, must have served
// within a window for their hit ratios to be compared: fewer say nothing.
// Peers that serve fewer have clients that barely use the cache: a cold pod
// costs them next to nothing, and without requests it would never warm.
const minGets = 100

// Rule is when a new pod counts as warm.
type Rule struct {
	// ItemsPercent: it holds this percentage of the items of its peers'
	// median pod.
	ItemsPercent int32
	// HitRatioPoints: its hit ratio over a window is at most this many
	// percentage points below its peers' over the same window.
	HitRatioPoints int32
}

// Window is what the pod and its peers said at the start and at the end of
// the same few seconds; Peers' entries pair up by index.
type Window struct {
	Pod   [2]Stats
	Peers [][2]Stats
}

// Verdict is what Rule found.
type Verdict struct {
	Warm bool
	// Why says what the pod holds and serves against its peers, and which
	// rule it met, in a sentence for status and events.
	Why string
}

// Judge says whether the window's pod is warm. A pod without peers, or
// whose peers hold nothing, has nothing to catch up with.
func (r Rule) Judge(w Window) Verdict {
	peers := make([]Stats, len(w.Peers))
	var peerHits, peerGets uint64
	for i, p := range w.Peers {
		peers[i] = p[1]
		h, g := delta(p)
		peerHits, peerGets = peerHits+h, peerGets+g
	}
	if v, ok := NothingToCatchUp(peers); ok {
		return v
	}
	median := medianItems(peers)
	if peerGets < minGets {
		return Verdict{Warm: true, Why: fmt.Sprintf("its peers served %d gets, too few for a cold pod to cost anything", peerGets)}
	}
	items := w.Pod[1].Items
	itemsPercent := float64(items) * 100 / float64(median)
	why := fmt.Sprintf("it holds %d items, %.0f%% of its peers' median %d (%d%% wanted)", items, itemsPercent, median, r.ItemsPercent)
	itemsWarm := items*100 >= uint64(r.ItemsPercent)*median

	hits, gets := delta(w.Pod)
	ratiosWarm := false
	if gets < minGets {
		why += fmt.Sprintf("; %d gets to it are too few to compare hit ratios", gets)
	} else {
		ratio, peerRatio := 100*float64(hits)/float64(gets), 100*float64(peerHits)/float64(peerGets)
		why += fmt.Sprintf("; its hit ratio is %.0f%% against its peers' %.0f%% (within %d points wanted)", ratio, peerRatio, r.HitRatioPoints)
		ratiosWarm = ratio+float64(r.HitRatioPoints) >= peerRatio
	}
	return Verdict{Warm: itemsWarm || ratiosWarm, Why: why}
}

// NothingToCatchUp is the verdict that one read of the peers settles,
// without a window: a pod without peers, or whose peers hold no items, is
// warm at once. A rollout of an idle cache then replaces its pods as fast
// as they answer, rather than a window's length slower each.
func NothingToCatchUp(peers []Stats) (Verdict, bool) {
	switch {
	case len(peers) == 0:
		return Verdict{Warm: true, Why: "it has no peers to catch up with"}, true
	case medianItems(peers) == 0:
		return Verdict{Warm: true, Why: "its peers hold no items"}, true
	}
	return Verdict{}, false
}

// delta is the hits and gets between a window's two Stats; none when the
// counters went back, as they do when memcached restarts.
func delta(s [2]Stats) (hits, gets uint64) {
	if s[1].GetHits < s[0].GetHits || s[1].GetMisses < s[0].GetMisses {
		return 0, 0
	}
	hits = s[1].GetHits - s[0].GetHits
	return hits, hits + s[1].GetMisses - s[0].GetMisses
}

// medianItems is the lower median of the items peers hold.
func medianItems(peers []Stats) uint64 {
	items := make([]uint64, len(peers))
	for i, p := range peers {
		items[i] = p.Items
	}
	slices.Sort(items)
	return items[(len(items)-1)/2]
}
