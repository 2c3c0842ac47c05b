package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsjson "sigs.k8s.io/json"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// The webhook configurations in config/webhook/manifests.yaml are generated
// from these markers (`make manifests`). The paths are the ones
// controller-runtime's builder derives from the Memcached GVK, plus one for
// the scale subresource, which the builder does not serve.
//
// +kubebuilder:webhook:path=/mutate-cache-example-com-v1-memcached,mutating=true,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create;update,versions=v1,name=mmemcached-v1.kb.io,admissionReviewVersions=v1,timeoutSeconds=5,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-cache-example-com-v1-memcached,mutating=false,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create;update,versions=v1,name=vmemcached-v1.kb.io,admissionReviewVersions=v1,timeoutSeconds=5,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/mutate-cache-example-com-v1-memcached-scale,mutating=true,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds/scale,verbs=update,versions=v1,name=mmemcachedscale-v1.kb.io,admissionReviewVersions=v1,timeoutSeconds=5,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-cache-example-com-v1-memcached-scale,mutating=false,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds/scale,verbs=update,versions=v1,name=vmemcachedscale-v1.kb.io,admissionReviewVersions=v1,timeoutSeconds=5,matchPolicy=Equivalent

// MutatePath is where the webhook server defaults a Memcached: the path
// controller-runtime's builder would derive, served here by a handler that
// lets undecodable objects through (see tolerateUndecodable). ScaleMutatePath
// and ScaleValidatePath are where it checks writes to the scale subresource
// (kubectl scale, autoscalers).
const (
	MutatePath        = "/mutate-cache-example-com-v1-memcached"
	ScaleMutatePath   = "/mutate-cache-example-com-v1-memcached-scale"
	ScaleValidatePath = "/validate-cache-example-com-v1-memcached-scale"
)

// SetupWithManager registers the Memcached defaulting and validating
// webhooks, and the scale subresource's, on mgr's webhook server. It returns
// policy's own error when policy is invalid.
func SetupWithManager(mgr ctrl.Manager, policy SizePolicy) error {
	if err := policy.Validate(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &cachev1.Memcached{}).
		WithValidator(memcachedValidator{policy: policy}).
		WithLogConstructor(requestLogger).
		Complete(); err != nil {
		return err
	}
	mgr.GetWebhookServer().Register(MutatePath, &admission.Webhook{Handler: tolerateUndecodable{
		decoder: admission.NewDecoder(mgr.GetScheme()),
		next:    admission.WithDefaulter[*cachev1.Memcached](mgr.GetScheme(), memcachedDefaulter{policy: policy}),
	}, LogConstructor: requestLogger})

	// A Scale is not a Memcached, so the typed builder cannot serve it; its
	// decoder gets a scheme of its own rather than relying on the manager's.
	scaleScheme := runtime.NewScheme()
	if err := autoscalingv1.AddToScheme(scaleScheme); err != nil {
		return err
	}
	scaleMutate := admission.WithDefaulter[*autoscalingv1.Scale](scaleScheme, scaleDefaulter{policy: policy})
	scaleValidate := admission.WithValidator[*autoscalingv1.Scale](scaleScheme, scaleValidator{policy: policy})
	scaleMutate.LogConstructor, scaleValidate.LogConstructor = requestLogger, requestLogger
	mgr.GetWebhookServer().Register(ScaleMutatePath, scaleMutate)
	mgr.GetWebhookServer().Register(ScaleValidatePath, scaleValidate)
	return nil
}

// tolerateUndecodable admits, unchanged, a Memcached that does not decode
// into the Go type: a string for spec.size, a fraction, a number beyond
// int32, a spec that is not an object. The API server checks the CRD schema
// only after the mutating webhooks, so passing such an object on lets the
// schema refuse it with its 422 and the field path, where the typed decoder
// would answer 400 with a Go type's name. The validating webhooks run after
// the schema and never see it.
type tolerateUndecodable struct {
	decoder admission.Decoder
	next    admission.Handler
}

// Handle passes only a JSON object that says it is a Memcached, in a create
// or update of one: anything else is a malformed request, which the API
// server never sends, and is refused as before. The object is decoded a
// second time only when next refused it as a bad request, so a good request
// costs nothing more.
func (h tolerateUndecodable) Handle(ctx context.Context, req admission.Request) admission.Response {
	resp := h.next.Handle(ctx, req)
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusBadRequest {
		return resp
	}
	writes := req.Operation == admissionv1.Create || req.Operation == admissionv1.Update
	if writes && h.decoder.DecodeRaw(req.Object, &cachev1.Memcached{}) != nil && saysMemcached(req) {
		return admission.Allowed("not a valid Memcached; the API server's schema check says why")
	}
	return resp
}

// saysMemcached reports whether req is for a Memcached and its object a JSON
// object whose apiVersion and kind are Memcached's. Only those two fields
// are decoded: the rest of an undecodable object may be anything a client
// sent, and decoded into maps it would take some thirty times its size.
// Field names match case-sensitively, as the API server's decoder does.
func saysMemcached(req admission.Request) bool {
	gk := memcachedGroupKind()
	var tm metav1.TypeMeta
	return req.Kind.Group == gk.Group && req.Kind.Kind == gk.Kind &&
		sigsjson.UnmarshalCaseSensitivePreserveInts(req.Object.Raw, &tm) == nil &&
		tm.GroupVersionKind() == cachev1.GroupVersion.WithKind("Memcached")
}

// A size below 1 is refused by the mutating webhooks, although they change
// nothing else, because they run before the API server checks the CRD
// schema: a later refusal would come from the schema ("should be greater
// than or equal to 1") and, for a negative size, also from the scale
// subresource's own check, with another wording and a path of ".spec.size".
// Refused here, every path (create, apply, patch, edit, scale) gives the one
// message of the size policy. The schema's minimum still holds when the
// webhooks do not run.

// refuseBelowOne is the mutating webhooks' part of the size policy.
func (p SizePolicy) refuseBelowOne(name string, size int32) error {
	if size >= 1 {
		return nil
	}
	return apierrors.NewInvalid(memcachedGroupKind(), name, p.ValidateSize(size, field.NewPath("spec", "size")))
}

func memcachedGroupKind() schema.GroupKind {
	return cachev1.GroupVersion.WithKind("Memcached").GroupKind()
}

// memcachedDefaulter fills in what a Memcached leaves out (see DefaultSpec)
// on create and update.
type memcachedDefaulter struct {
	policy SizePolicy
}

func (d memcachedDefaulter) Default(ctx context.Context, mc *cachev1.Memcached) error {
	if err := checkRequest(ctx); err != nil {
		return err
	}
	old, err := oldMemcached(ctx)
	if err != nil {
		return err
	}
	d.policy.DefaultMemcached(mc)
	DefaultSpec(&mc.Spec, old)
	return d.policy.refuseBelowOne(mc.Name, *mc.Spec.Size)
}

// oldMemcached is the stored object an update replaces, nil on create or
// outside an admission request.
func oldMemcached(ctx context.Context) (*cachev1.MemcachedSpec, error) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil || len(req.OldObject.Raw) == 0 {
		return nil, nil
	}
	old := &cachev1.Memcached{}
	if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the stored Memcached does not decode: %v", err))
	}
	return &old.Spec, nil
}

// memcachedValidator admits a Memcached whose name and size meet the policy
// and whose spec memcached and Kubernetes accept.
type memcachedValidator struct {
	policy SizePolicy
}

func (v memcachedValidator) ValidateCreate(ctx context.Context, mc *cachev1.Memcached) (admission.Warnings, error) {
	if err := checkRequest(ctx); err != nil {
		return nil, err
	}
	errs := v.policy.ValidateMemcached(mc)
	errs = append(errs, validateSpec(&mc.Spec, field.NewPath("spec"))...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(memcachedGroupKind(), mc.Name, errs)
	}
	return append(v.policy.Warnings(mc), operand.Warnings(&mc.Spec, field.NewPath("spec"))...), nil
}

// ValidateUpdate checks only what the update changes. The name cannot change
// (the API server forbids it). An update that keeps the spec is admitted:
// status writes, label and annotation edits, finalizer removal. That holds
// even when the stored object breaks a policy made stricter after it was
// created (say size 40, then --max-size=16): blocking those updates would not
// bring it back within the policy, only stop its owners from managing it.
// A changed size must meet the policy in force, and a changed rest of the
// spec must be one memcached and Kubernetes accept. Changes that restart the
// pods are admitted with a warning that says so.
func (v memcachedValidator) ValidateUpdate(ctx context.Context, oldMC, mc *cachev1.Memcached) (admission.Warnings, error) {
	if err := checkRequest(ctx); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	var warnings admission.Warnings
	size, path := v.policy.effectiveSize(mc), field.NewPath("spec", "size")
	if size != v.policy.effectiveSize(oldMC) {
		errs = v.policy.ValidateSize(size, path)
		warnings = sizeWarnings(size, path)
	}
	if !equalBesideSize(&oldMC.Spec, &mc.Spec) {
		errs = append(errs, validateSpec(&mc.Spec, field.NewPath("spec"))...)
		warnings = append(warnings, operand.Warnings(&mc.Spec, field.NewPath("spec"))...)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(memcachedGroupKind(), mc.Name, errs)
	}
	return append(warnings, restartWarnings(&oldMC.Spec, &mc.Spec)...), nil
}

func (v memcachedValidator) ValidateDelete(context.Context, *cachev1.Memcached) (admission.Warnings, error) {
	return nil, nil
}

// checkRequest covers what controller-runtime's typed decoding cannot see.
//
// An operation other than CREATE or UPDATE: the typed defaulter skips
// DELETE but defaults anything else, and the webhooks are registered for
// CREATE and UPDATE only.
//
// A wrong kind: the decoder refuses an object whose apiVersion and kind are
// not Memcached's, but an object that carries none is decoded as a Memcached
// whatever the request says it is, so the request's kind is checked too.
//
// Outside an admission request (a direct call) there is nothing to check.
func checkRequest(ctx context.Context) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return apierrors.NewBadRequest(fmt.Sprintf("unexpected operation %q", req.Operation))
	}
	gk := memcachedGroupKind()
	if req.Kind.Kind != "" && (req.Kind.Group != gk.Group || req.Kind.Kind != gk.Kind) {
		return apierrors.NewBadRequest(fmt.Sprintf("this webhook admits %s, not %s",
			gk, schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}))
	}
	return nil
}

// scaleDefaulter refuses a scale below 1 (see refuseBelowOne); it changes
// nothing.
type scaleDefaulter struct {
	policy SizePolicy
}

func (d scaleDefaulter) Default(_ context.Context, s *autoscalingv1.Scale) error {
	return d.policy.refuseBelowOne(s.Name, s.Spec.Replicas)
}

// scaleValidator holds writes to the scale subresource to the policy's range;
// without it `kubectl scale --replicas=40` would bypass --max-size. Its
// errors name the Memcached's spec.size, which the Scale's spec.replicas is
// only a view of, so that every path to the size gives the same message.
type scaleValidator struct {
	policy SizePolicy
}

func (v scaleValidator) ValidateCreate(_ context.Context, s *autoscalingv1.Scale) (admission.Warnings, error) {
	return v.validate(s)
}

// ValidateUpdate checks the replicas only when they change, for the reason
// given at memcachedValidator.ValidateUpdate.
func (v scaleValidator) ValidateUpdate(_ context.Context, oldScale, s *autoscalingv1.Scale) (admission.Warnings, error) {
	if s.Spec.Replicas == oldScale.Spec.Replicas {
		return nil, nil
	}
	return v.validate(s)
}

func (v scaleValidator) ValidateDelete(context.Context, *autoscalingv1.Scale) (admission.Warnings, error) {
	return nil, nil
}

func (v scaleValidator) validate(s *autoscalingv1.Scale) (admission.Warnings, error) {
	path := field.NewPath("spec", "size")
	if errs := v.policy.ValidateSize(s.Spec.Replicas, path); len(errs) > 0 {
		return nil, apierrors.NewInvalid(memcachedGroupKind(), s.Name, errs)
	}
	return sizeWarnings(s.Spec.Replicas, path), nil
}
