package manifest

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResourceEnv(t *testing.T) {
	fromResource := func(name, res, divisor string) corev1.EnvVar {
		ref := &corev1.ResourceFieldSelector{Resource: res}
		if divisor != "" {
			ref.Divisor = resource.MustParse(divisor)
		}
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: ref}}
	}
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	for _, tc := range []struct {
		name    string
		env     []corev1.EnvVar
		want    []string
		wantErr string
	}{
		{name: "half a core is one, rounded up as the kubelet rounds",
			env: []corev1.EnvVar{fromResource("CORES", "limits.cpu", "1")}, want: []string{"CORES=1"}},
		{name: "millicores",
			env: []corev1.EnvVar{fromResource("CPU", "limits.cpu", "1m")}, want: []string{"CPU=500"}},
		{name: "memory in bytes, the default divisor",
			env: []corev1.EnvVar{fromResource("MEMORY_LIMIT", "limits.memory", "")}, want: []string{"MEMORY_LIMIT=268435456"}},
		{name: "memory in mebibytes",
			env: []corev1.EnvVar{fromResource("MIB", "limits.memory", "1Mi")}, want: []string{"MIB=256"}},
		{name: "other variables are left out",
			env: []corev1.EnvVar{{Name: "PLAIN", Value: "x"}, fromResource("CORES", "limits.cpu", "1")}, want: []string{"CORES=1"}},
		{name: "a request the container does not set",
			env: []corev1.EnvVar{fromResource("CPU", "requests.cpu", "1")}, wantErr: "sets no requests.cpu"},
		{name: "a resource the kubelet's rounding here does not cover",
			env: []corev1.EnvVar{fromResource("EPH", "limits.ephemeral-storage", "1")}, wantErr: `"limits.ephemeral-storage" is not one of`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResourceEnv(&corev1.Container{Name: "c", Env: tc.env, Resources: corev1.ResourceRequirements{Limits: limits}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ResourceEnv = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
