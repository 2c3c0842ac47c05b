package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// readCRDs decodes every CRD in the YAML files at paths (files or
// directories of *.yaml).
func readCRDs(paths ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var files []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil {
			return nil, err
		} else if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.yaml"))
		if err != nil {
			return nil, err
		}
		files = append(files, matches...)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := dec.Decode(crd); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if crd.Kind == "CustomResourceDefinition" {
				crds = append(crds, crd)
			}
		}
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CRD in %v", paths)
	}
	return crds, nil
}

// createCRDs creates the CRDs, as `kubectl create` does (an apply would need
// the last-applied annotation, and OLM's CSV CRD is too large for it), and
// waits until every one is Established. One that another spec made first
// (faults_olm_first_rollout_test.go makes the Subscription CRD) is replaced.
func createCRDs(ctx context.Context, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition) {
	for _, crd := range crds {
		err := c.Create(ctx, crd)
		if apierrors.IsAlreadyExists(err) {
			existing := &apiextensionsv1.CustomResourceDefinition{}
			ExpectWithOffset(1, c.Get(ctx, client.ObjectKeyFromObject(crd), existing)).To(Succeed())
			crd.ResourceVersion = existing.ResourceVersion
			err = c.Update(ctx, crd)
		}
		ExpectWithOffset(1, err).To(Succeed(), "CRD %s", crd.Name)
	}
	EventuallyWithOffset(1, func(g Gomega) {
		for _, crd := range crds {
			got := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(crd), got)).To(Succeed())
			established := false
			for _, cond := range got.Status.Conditions {
				established = established || (cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue)
			}
			g.Expect(established).To(BeTrue(), "CRD %s not Established", crd.Name)
			// Discovery serves a CRD a moment after it is Established; until
			// then a create of its kind fails with no kind match.
			gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
			_, err := c.RESTMapper().RESTMapping(gk, crd.Spec.Versions[0].Name)
			g.Expect(err).NotTo(HaveOccurred())
		}
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
}
