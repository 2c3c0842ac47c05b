// Package releasebundle makes the release bundle, the one that names every
// image by digest, the way a release does: `make bundle
// USE_IMAGE_DIGESTS=true`, in a copy of this working tree so that the
// committed bundle/, bundle.Dockerfile and config/ stay as they are.
//
// hack/bundle.sh resolves each tag with crane (go-containerregistry)
// against the registry the reference names (quay.io, docker.io, ...),
// honouring HTTPS_PROXY and SSL_CERT_FILE. A test never lets
// that reach the real registry: it pushes the images Images builds to a
// package registrymirror mirror and passes its ProxyEnv to Make, so the
// lookups are answered on loopback, under the images' published names.
//
//	imgs, err := releasebundle.Images(ctx, dir, devCSV.Spec.RelatedImages)
//	m, err := registrymirror.Start(dir, hosts...)
//	... m.Push(ctx, ref, img) for each
//	bundleDir, err := releasebundle.Make(ctx, dir, m.ProxyEnv())
package releasebundle
