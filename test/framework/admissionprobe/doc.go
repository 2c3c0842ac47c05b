// Package admissionprobe writes through the API server's admission chain
// without pause and records every answer, to measure how long admission
// fails while something changes underneath it (an OLM upgrade replacing the
// webhook server, a rollout, a restart).
//
// Each round makes two dry-run creates: one the webhooks must admit and one
// they must refuse. Dry-run requests run every admission webhook (the
// operator's declare no side effects) and store nothing, so the probe
// creates no pods however long it runs. An answer counts as a failure when
// it is not the one the object's content calls for: the good object refused
// for any reason, or the bad one admitted (admission failing open) or
// refused by anything but the webhook's own verdict (a call that never
// reached a webhook, timed out, or met no endpoint).
//
//	p := admissionprobe.Start(ctx, admissionprobe.Options{Client: c, Good: ..., Bad: ..., Refused: ...})
//	... the change ...
//	r := p.Stop()
//	Expect(r.Failures).To(BeEmpty(), r.String())
package admissionprobe
