// Command ripple-lab-operator is the lab's test operator (docs/lab.md): a
// controller-runtime operator of the custom resource RippleApp
// (lab.ripple.dev/v1, lab/operator/crd.yaml). For each RippleApp it keeps a
// ConfigMap <name>-config and a Deployment <name>, both controlled by the
// RippleApp, and reports the Deployment's ready replicas in the RippleApp's
// status. It writes nothing else: no events, no leader-election lease, and it
// never copies metadata (annotations included) from its RippleApp to them.
package main

import (
	"context"
	"flag"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// groupVersion is the RippleApp's API group and version.
var groupVersion = schema.GroupVersion{Group: "lab.ripple.dev", Version: "v1"}

// RippleAppSpec is what a person asks for.
type RippleAppSpec struct {
	Replicas int32  `json:"replicas"`
	Image    string `json:"image"`
}

// RippleAppStatus is what the operator reports.
type RippleAppStatus struct {
	ReadyReplicas int32 `json:"readyReplicas"`
}

// RippleApp is the custom resource.
type RippleApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              RippleAppSpec   `json:"spec,omitempty"`
	Status            RippleAppStatus `json:"status,omitempty"`
}

// DeepCopyObject implements runtime.Object (spec and status are plain values).
func (in *RippleApp) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// RippleAppList is the list kind the informer needs.
type RippleAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RippleApp `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (in *RippleAppList) DeepCopyObject() runtime.Object {
	out := *in
	out.Items = make([]RippleApp, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopyObject().(*RippleApp)
	}
	return &out
}

// reconciler brings one RippleApp's children and status in line with it.
type reconciler struct{ client.Client }

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app RippleApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.configMap(ctx, &app); err != nil {
		return ctrl.Result{}, terminating(err)
	}
	dep, err := r.deployment(ctx, &app)
	if err != nil || dep == nil {
		return ctrl.Result{}, terminating(err)
	}
	if app.Status.ReadyReplicas == dep.Status.ReadyReplicas {
		return ctrl.Result{}, nil
	}
	// A merge patch of status.readyReplicas alone, on the status subresource.
	orig := app.DeepCopyObject().(*RippleApp)
	app.Status.ReadyReplicas = dep.Status.ReadyReplicas
	return ctrl.Result{}, r.Status().Patch(ctx, &app, client.MergeFrom(orig))
}

// terminating drops the error of a create in a namespace being deleted: the
// RippleApp goes with it, so there is nothing to retry.
func terminating(err error) error {
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return nil
	}
	return err
}

// owned gives a child of app its name, namespace and controlling owner, nothing else.
func owned(app *RippleApp, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: app.Namespace,
		OwnerReferences: []metav1.OwnerReference{
			*metav1.NewControllerRef(app, groupVersion.WithKind("RippleApp")),
		},
	}
}

// configMap creates <name>-config, or patches its data when the image changed.
func (r *reconciler) configMap(ctx context.Context, app *RippleApp) error {
	var cm corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: app.Name + "-config"}, &cm)
	if apierrors.IsNotFound(err) {
		cm = corev1.ConfigMap{ObjectMeta: owned(app, app.Name+"-config"),
			Data: map[string]string{"image": app.Spec.Image}}
		return client.IgnoreAlreadyExists(r.Create(ctx, &cm))
	}
	if err != nil || cm.Data["image"] == app.Spec.Image {
		return err
	}
	orig := cm.DeepCopy()
	cm.Data = map[string]string{"image": app.Spec.Image}
	return r.Patch(ctx, &cm, client.MergeFrom(orig))
}

// deployment creates <name>, or patches its replicas and image when the spec
// changed. It returns the Deployment as read (nil when just created).
func (r *reconciler) deployment(ctx context.Context, app *RippleApp) (*appsv1.Deployment, error) {
	var dep appsv1.Deployment
	err := r.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: app.Name}, &dep)
	labels := map[string]string{"app": app.Name}
	if apierrors.IsNotFound(err) {
		replicas := app.Spec.Replicas
		dep = appsv1.Deployment{ObjectMeta: owned(app, app.Name), Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "app", Image: app.Spec.Image}}},
			},
		}}
		return nil, client.IgnoreAlreadyExists(r.Create(ctx, &dep))
	}
	if err != nil {
		return nil, err
	}
	c := &dep.Spec.Template.Spec.Containers
	if dep.Spec.Replicas != nil && *dep.Spec.Replicas == app.Spec.Replicas &&
		len(*c) == 1 && (*c)[0].Image == app.Spec.Image {
		return &dep, nil
	}
	// A merge patch of the fields that differ: the Deployment's metadata is
	// left as it is.
	orig := dep.DeepCopy()
	replicas := app.Spec.Replicas
	dep.Spec.Replicas = &replicas
	if len(*c) == 1 {
		(*c)[0].Image = app.Spec.Image
	}
	return &dep, r.Patch(ctx, &dep, client.MergeFrom(orig))
}

func main() {
	flag.Parse() // --kubeconfig (registered by controller-runtime)
	ctrl.SetLogger(zap.New())
	log := ctrl.Log.WithName("ripple-lab-operator")

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	scheme.AddKnownTypes(groupVersion, &RippleApp{}, &RippleAppList{})
	metav1.AddToGroupVersion(scheme, groupVersion)

	// No metrics or health endpoints, no leader election (one process, no lease).
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		log.Error(err, "cannot create the manager")
		os.Exit(1)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&RippleApp{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.ConfigMap{}).
		Complete(&reconciler{mgr.GetClient()})
	if err != nil {
		log.Error(err, "cannot create the controller")
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
