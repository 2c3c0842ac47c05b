// Command catalogchannels writes the olm.channel blobs of `make catalog`
// (hack/catalog.sh): it reads the bundles `opm render -o yaml` printed on
// its standard input, oldest first, and writes one channel per name given,
// each holding every bundle with the upgrade edges its own CSV declares:
// spec.replaces as the entry's replaces, the olm.skipRange annotation as its
// skipRange. A file-based catalog ignores both in the CSV and reads only the
// channel entries, so copying them is what makes the catalog's upgrade graph
// the one `make bundle` (PREVIOUS_VERSION, VERSION) wrote.
//
//	opm render bundle/ -o yaml | go run ./hack/catalogchannels -package memcached-operator -channels fast,stable
//
// It refuses bundles that do not form one chain: each bundle after the first
// must replace the one before it, so a channel has one head and a
// Subscription steps through every release. The first may replace a bundle
// the catalog no longer holds.
package main

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	pkg := flag.String("package", "", "the package the channels belong to")
	channels := flag.String("channels", "", "the channels to write, comma separated")
	flag.Parse()
	if *pkg == "" || *channels == "" {
		fmt.Fprintln(os.Stderr, "usage: catalogchannels -package NAME -channels A,B < opm-render.yaml")
		os.Exit(2)
	}
	in, err := io.ReadAll(os.Stdin)
	if err == nil {
		var entries []entry
		if entries, err = channelEntries(in); err == nil {
			_, err = io.WriteString(os.Stdout, channelBlobs(*pkg, strings.Split(*channels, ","), entries))
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "catalogchannels:", err)
		os.Exit(1)
	}
}

// entry is one bundle of a channel and its upgrade edges.
type entry struct {
	Name      string `json:"name"`
	Replaces  string `json:"replaces,omitempty"`
	SkipRange string `json:"skipRange,omitempty"`
}

// renderedBlob is what this command reads of a blob `opm render` prints.
type renderedBlob struct {
	Schema     string `json:"schema"`
	Name       string `json:"name"`
	Properties []struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"properties"`
}

// csvEdges is what a CSV says about its upgrade edges.
type csvEdges struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Replaces string `json:"replaces"`
	} `json:"spec"`
}

// channelEntries reads the olm.bundle blobs of rendered, in order, with the
// edges of their CSVs, and checks that they form one chain.
func channelEntries(rendered []byte) ([]entry, error) {
	var entries []entry
	for _, doc := range strings.Split("\n"+string(rendered), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var b renderedBlob
		if err := yaml.Unmarshal([]byte(doc), &b); err != nil {
			return nil, err
		}
		if b.Schema != "olm.bundle" {
			continue
		}
		csv, err := bundleCSV(b)
		if err != nil {
			return nil, err
		}
		e := entry{Name: b.Name, Replaces: csv.Spec.Replaces, SkipRange: csv.Metadata.Annotations["olm.skipRange"]}
		if n := len(entries); n > 0 && e.Replaces != entries[n-1].Name {
			return nil, fmt.Errorf("bundle %s replaces %q, not the bundle before it, %s: list the bundles oldest first, "+
				"each made with make bundle PREVIOUS_VERSION=<the version before>", e.Name, e.Replaces, entries[n-1].Name)
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("no olm.bundle blob in the input")
	}
	return entries, nil
}

// bundleCSV finds the CSV among the manifests a rendered bundle carries as
// olm.bundle.object properties.
func bundleCSV(b renderedBlob) (csvEdges, error) {
	for _, p := range b.Properties {
		if p.Type != "olm.bundle.object" {
			continue
		}
		var obj struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(p.Value, &obj); err != nil {
			return csvEdges{}, fmt.Errorf("bundle %s: %w", b.Name, err)
		}
		raw, err := base64.StdEncoding.DecodeString(obj.Data)
		if err != nil {
			return csvEdges{}, fmt.Errorf("bundle %s: %w", b.Name, err)
		}
		var csv csvEdges
		if err := json.Unmarshal(raw, &csv); err != nil {
			return csvEdges{}, fmt.Errorf("bundle %s: %w", b.Name, err)
		}
		if csv.Kind == "ClusterServiceVersion" {
			return csv, nil
		}
	}
	return csvEdges{}, fmt.Errorf("bundle %s: no ClusterServiceVersion among its olm.bundle.object properties", b.Name)
}

// channelBlobs is one olm.channel blob per channel, each holding entries.
func channelBlobs(pkg string, channels []string, entries []entry) string {
	var out strings.Builder
	for _, c := range channels {
		blob, err := yaml.Marshal(struct {
			Schema  string  `json:"schema"`
			Package string  `json:"package"`
			Name    string  `json:"name"`
			Entries []entry `json:"entries"`
		}{"olm.channel", pkg, c, entries})
		if err != nil {
			panic(err) // strings only: cannot fail
		}
		out.WriteString("---\n")
		out.Write(blob)
	}
	return out.String()
}
