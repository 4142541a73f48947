// Package health tells how a live Kubernetes object is doing from the object alone
// (its spec and status; nothing else is read): Healthy, Progressing, Degraded,
// Suspended, Missing or Unknown, with a one-line message, after Argo CD's model.
//
// Check dispatches on the object's kind to one small function per kind
// (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, Pod, PersistentVolumeClaim,
// Service, Ingress, CustomResourceDefinition, APIService, HorizontalPodAutoscaler,
// Namespace). Any other kind with a Ready or Available condition is judged by it;
// anything else is Healthy once it exists. Worst aggregates several results.
//
// The package does no I/O: the Kubernetes runtime watches objects and calls Check
// on each version it sees.
package health
