package webhooks

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// The spec's resources and placement are copied into the Deployment's pod
// template. The API server would refuse a bad one only there, when the
// reconciler writes the Deployment, long after the Memcached was admitted;
// these checks refuse it at admission instead, with the Memcached's own
// field paths. They follow the API server's validation of a pod spec for
// the fields a Memcached carries.

// validateSpec returns every error in spec beside its size: memcached's rules
// and the pod spec's.
func validateSpec(spec *cachev1.MemcachedSpec, path *field.Path) field.ErrorList {
	errs := operand.Validate(spec, path)
	if spec.Resources != nil {
		errs = append(errs, validateResources(spec.Resources, path.Child("resources"), memoryLimitFloor(spec, errs, path))...)
	}
	errs = append(errs, validateLabels(spec.NodeSelector, path.Child("nodeSelector"))...)
	for i := range spec.Tolerations {
		errs = append(errs, validateToleration(&spec.Tolerations[i], path.Child("tolerations").Index(i))...)
	}
	if spec.Affinity != nil {
		errs = append(errs, validateAffinity(spec.Affinity, path.Child("affinity"))...)
	}
	errs = append(errs, validateSpread(spec.TopologySpreadConstraints, path.Child("topologySpreadConstraints"))...)
	if spec.PriorityClassName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(spec.PriorityClassName) {
			errs = append(errs, field.Invalid(path.Child("priorityClassName"), spec.PriorityClassName, msg))
		}
	}
	return errs
}

// memoryLimitFloor is the memory limit memcached needs when errs already
// refuse spec's memory limit for being below it, and 0 otherwise.
func memoryLimitFloor(spec *cachev1.MemcachedSpec, errs field.ErrorList, path *field.Path) int64 {
	limitPath := path.Child("resources", "limits").Key(string(corev1.ResourceMemory)).String()
	for _, err := range errs {
		if err.Field == limitPath {
			return operand.MinMemoryLimit(operand.FromSpec(spec))
		}
	}
	return 0
}

// validateResources checks r as the API server checks a container's
// resources. A memory request above its limit is not reported when the limit
// is already refused for being below memoryFloor and the request is at most
// that: raising the limit, as that error asks, fixes both. Such a request is
// most often the one the defaulting webhook derived, which the user never
// wrote and cannot be the cause.
func validateResources(r *corev1.ResourceRequirements, path *field.Path, memoryFloor int64) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for name, q := range list.rl {
			p := path.Child(list.name).Key(string(name))
			if !isContainerResource(name) {
				errs = append(errs, field.NotSupported(p, name, []string{"cpu", "memory", "ephemeral-storage", "hugepages-<size>"}))
			}
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for name, request := range r.Requests {
		if name == corev1.ResourceMemory && memoryFloor > 0 && request.CmpInt64(memoryFloor) <= 0 {
			continue
		}
		if limit, ok := r.Limits[name]; ok && request.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), request.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	if len(r.Claims) > 0 {
		errs = append(errs, field.Forbidden(path.Child("claims"), "memcached pods have no resource claims to refer to"))
	}
	return errs
}

func isContainerResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func validateLabels(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k, v := range labels {
		errs = append(errs, validateQualifiedName(k, path)...)
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path.Key(k), v, msg))
		}
	}
	return errs
}

func validateQualifiedName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

func validateToleration(t *corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, validateQualifiedName(t.Key, path.Child("key"))...)
	}
	switch t.Operator {
	case corev1.TolerationOpEqual, "":
		if t.Key == "" {
			errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "must be Exists when key is empty, which matches every taint"))
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, msg))
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect,
			[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(path.Child("effect"), t.Effect, "must be NoExecute when tolerationSeconds is set"))
	}
	return errs
}

func validateAffinity(a *corev1.Affinity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := path.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			rp := p.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(req.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(rp, "must have at least one node selector term"))
			}
			for i := range req.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(&req.NodeSelectorTerms[i], rp.Index(i))...)
			}
		}
		for i, pref := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			pp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(pref.Weight, pp.Child("weight"))...)
			errs = append(errs, validateNodeSelectorTerm(&pref.Preference, pp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution,
			pa.PreferredDuringSchedulingIgnoredDuringExecution, path.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution,
			pa.PreferredDuringSchedulingIgnoredDuringExecution, path.Child("podAntiAffinity"))...)
	}
	return errs
}

func validateNodeSelectorTerm(term *corev1.NodeSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range term.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		errs = append(errs, validateQualifiedName(r.Key, p.Child("key"))...)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "must be specified when operator is In or NotIn"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when operator is Exists or DoesNotExist"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(p.Child("values"), "must be one integer when operator is Gt or Lt"))
			} else if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
				errs = append(errs, field.Invalid(p.Child("values").Index(0), r.Values[0], "must be an integer when operator is Gt or Lt"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), r.Operator, []corev1.NodeSelectorOperator{
				corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
				corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}))
		}
		for j, v := range r.Values {
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(p.Child("values").Index(j), v, msg))
			}
		}
	}
	for i, r := range term.MatchFields {
		p := path.Child("matchFields").Index(i)
		if r.Key != "metadata.name" {
			errs = append(errs, field.NotSupported(p.Child("key"), r.Key, []string{"metadata.name"}))
		}
		if (r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn) || len(r.Values) != 1 {
			errs = append(errs, field.Invalid(p, r.Operator, "must be In or NotIn with exactly one value"))
		}
	}
	return errs
}

func validatePodAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range required {
		errs = append(errs, validatePodAffinityTerm(&required[i], path.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i := range preferred {
		p := path.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		errs = append(errs, validateWeight(preferred[i].Weight, p.Child("weight"))...)
		errs = append(errs, validatePodAffinityTerm(&preferred[i].PodAffinityTerm, p.Child("podAffinityTerm"))...)
	}
	return errs
}

func validatePodAffinityTerm(term *corev1.PodAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if term.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
	} else {
		errs = append(errs, validateQualifiedName(term.TopologyKey, path.Child("topologyKey"))...)
	}
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs = append(errs, metav1validation.ValidateLabelSelector(term.LabelSelector, opts, path.Child("labelSelector"))...)
	errs = append(errs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, path.Child("namespaceSelector"))...)
	for i, ns := range term.Namespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(path.Child("namespaces").Index(i), ns, msg))
		}
	}
	return errs
}

func validateWeight(w int32, path *field.Path) field.ErrorList {
	if w < 1 || w > 100 {
		return field.ErrorList{field.Invalid(path, w, "must be in the range 1-100")}
	}
	return nil
}

func validateSpread(constraints []corev1.TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, c := range constraints {
		p := path.Index(i)
		if c.MaxSkew < 1 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, validateQualifiedName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch c.WhenUnsatisfiable {
		case corev1.DoNotSchedule, corev1.ScheduleAnyway:
		default:
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable,
				[]corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}))
		}
		if pair := c.TopologyKey + "/" + string(c.WhenUnsatisfiable); seen.Has(pair) {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
		} else {
			seen.Insert(pair)
		}
		if c.MinDomains != nil {
			if *c.MinDomains < 1 {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, "must be greater than zero"))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, "can only be set when whenUnsatisfiable is DoNotSchedule"))
			}
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector,
			metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
		for j, key := range c.MatchLabelKeys {
			kp := p.Child("matchLabelKeys").Index(j)
			errs = append(errs, validateQualifiedName(key, kp)...)
			if c.LabelSelector == nil {
				errs = append(errs, field.Forbidden(kp, "must not be specified when labelSelector is not set"))
			} else if _, ok := c.LabelSelector.MatchLabels[key]; ok {
				errs = append(errs, field.Invalid(kp, key, "exists in both matchLabelKeys and labelSelector"))
			}
		}
	}
	return errs
}
