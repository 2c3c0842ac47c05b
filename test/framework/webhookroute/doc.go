// Package webhookroute bends the API server's calls to the operator's
// webhook Service towards an operator process on the test's host, without
// changing what the API server trusts or the name it verifies.
//
// The pods of the local cluster are kwok's and serve nothing, so a webhook
// Service leads nowhere. ToHost turns the Service into an ExternalName for
// localhost (its ports kept), which the API server's service resolver dials
// directly, and sets each webhook's clientConfig.service.port to the host
// operator's port. The configurations still name the Service, so the API
// server still verifies the served certificate against their caBundle for
// <service>.<namespace>.svc. (A clientConfig URL of https://127.0.0.1:port
// would make it verify the certificate for 127.0.0.1 instead, which a
// certificate issued for the Service does not name.) Whatever owns these
// objects (olm-operator) must be stopped first, or it puts them back.
package webhookroute
