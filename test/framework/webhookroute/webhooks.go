package webhookroute

import (
	"context"
	"errors"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Webhooks are webhook configurations as last read.
type Webhooks struct {
	Mutating   []admissionregistrationv1.MutatingWebhookConfiguration
	Validating []admissionregistrationv1.ValidatingWebhookConfiguration
}

// Names name webhook configurations.
type Names struct {
	Mutating, Validating []string
}

// List reads the webhook configurations that opts select (OLM's carry the
// label olm.owner=<CSV name>).
func List(ctx context.Context, k client.Reader, opts ...client.ListOption) (Webhooks, error) {
	var m admissionregistrationv1.MutatingWebhookConfigurationList
	var v admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := errors.Join(k.List(ctx, &m, opts...), k.List(ctx, &v, opts...)); err != nil {
		return Webhooks{}, err
	}
	return Webhooks{Mutating: m.Items, Validating: v.Items}, nil
}

// Get reads the webhook configurations with these names.
func Get(ctx context.Context, k client.Reader, names Names) (Webhooks, error) {
	var w Webhooks
	for _, name := range names.Mutating {
		var m admissionregistrationv1.MutatingWebhookConfiguration
		if err := k.Get(ctx, client.ObjectKey{Name: name}, &m); err != nil {
			return Webhooks{}, err
		}
		w.Mutating = append(w.Mutating, m)
	}
	for _, name := range names.Validating {
		var v admissionregistrationv1.ValidatingWebhookConfiguration
		if err := k.Get(ctx, client.ObjectKey{Name: name}, &v); err != nil {
			return Webhooks{}, err
		}
		w.Validating = append(w.Validating, v)
	}
	return w, nil
}

// Names are the configurations' names.
func (w Webhooks) Names() Names {
	var n Names
	for _, m := range w.Mutating {
		n.Mutating = append(n.Mutating, m.Name)
	}
	for _, v := range w.Validating {
		n.Validating = append(n.Validating, v.Name)
	}
	return n
}

// Hook is one webhook of a configuration, mutating or validating: the
// fields both kinds have, pointing into the configuration, to read or
// change before Update.
type Hook struct {
	Name              string
	ClientConfig      *admissionregistrationv1.WebhookClientConfig
	FailurePolicy     *admissionregistrationv1.FailurePolicyType
	NamespaceSelector *metav1.LabelSelector
}

// Hooks are every webhook of the configurations, the mutating ones first.
func (w Webhooks) Hooks() []Hook {
	var out []Hook
	for i := range w.Mutating {
		for j := range w.Mutating[i].Webhooks {
			h := &w.Mutating[i].Webhooks[j]
			out = append(out, Hook{h.Name, &h.ClientConfig, h.FailurePolicy, h.NamespaceSelector})
		}
	}
	for i := range w.Validating {
		for j := range w.Validating[i].Webhooks {
			h := &w.Validating[i].Webhooks[j]
			out = append(out, Hook{h.Name, &h.ClientConfig, h.FailurePolicy, h.NamespaceSelector})
		}
	}
	return out
}

// Objects are the configurations themselves.
func (w Webhooks) Objects() []client.Object {
	var out []client.Object
	for i := range w.Mutating {
		out = append(out, &w.Mutating[i])
	}
	for i := range w.Validating {
		out = append(out, &w.Validating[i])
	}
	return out
}

// ClientConfigs are every webhook's clientConfig, by webhook name, to read
// or change before Update.
func (w Webhooks) ClientConfigs() map[string]*admissionregistrationv1.WebhookClientConfig {
	out := map[string]*admissionregistrationv1.WebhookClientConfig{}
	for _, h := range w.Hooks() {
		out[h.Name] = h.ClientConfig
	}
	return out
}

// CABundles are every webhook's caBundle, by webhook name.
func (w Webhooks) CABundles() map[string][]byte {
	out := map[string][]byte{}
	for name, cc := range w.ClientConfigs() {
		out[name] = cc.CABundle
	}
	return out
}

// Update writes every configuration back.
func (w Webhooks) Update(ctx context.Context, k client.Writer) error {
	var errs []error
	for _, o := range w.Objects() {
		errs = append(errs, k.Update(ctx, o))
	}
	return errors.Join(errs...)
}
