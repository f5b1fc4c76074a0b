//! A kernel's parameter list: the tuples of up to 8 [`KernelParam`]s ([`ParamList`]), with the
//! type each parameter names in a signature, and how [`kernel!`](crate::kernel) names each
//! parameter's type from one expansion ([`KernelTypes`], [`Split`]). Re-exported by
//! [`crate::signature`].
//!
//! Kernel floor: names the views' [`KernelParam`] and the vocabulary, no backend, not the emulator,
//! not the host's [`Kernel`](crate::Kernel) (which names this, through its launch arguments).

use crate::memory::KernelParam;
use crate::vocab::param::ParamType;

/// A tuple of kernel parameters, with the types a signature names. Sealed: the tuples of
/// [`KernelParam`]s, up to 8 of them (the launchers read a launch's views from it).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel's parameter list",
    note = "every parameter of a kernel is a `gpu_std::KernelParam` (a `Pod` scalar or a global-memory view), and a kernel takes at most 8"
)]
pub trait ParamList: param_list_sealed::Sealed {
    /// Each parameter's type, in order.
    const TYPES: &'static [ParamType];
}

mod param_list_sealed {
    pub trait Sealed {}
}

/// A kernel's parameter list, written once: [`kernel!`](crate::kernel) names every parameter's type
/// through it (`<<K as KernelTypes>::Args<'a> as Split>::Head`, ...), so that the `.entry`, its
/// signature and the body take the types of one expansion of the kernel's tokens (a macro among them
/// that expands differently each time cannot give them different types).
#[doc(hidden)]
pub trait KernelTypes {
    /// The parameters, as a tuple.
    type Args<'a>: ParamList;
}

/// A parameter tuple as its first element and the tuple of the others: the type of parameter `k` is
/// `Head` after `k` `Tail`s.
#[doc(hidden)]
pub trait Split {
    /// The first parameter's type.
    type Head;
    /// The tuple of the other parameters.
    type Tail;
}

macro_rules! param_lists {
    () => {
        impl param_list_sealed::Sealed for () {}
        impl ParamList for () {
            const TYPES: &'static [ParamType] = &[];
        }
    };
    ($h:ident $(, $t:ident)*) => {
        impl<$h: KernelParam $(, $t: KernelParam)*> param_list_sealed::Sealed for ($h, $($t,)*) {}
        impl<$h: KernelParam $(, $t: KernelParam)*> ParamList for ($h, $($t,)*) {
            const TYPES: &'static [ParamType] = &[$h::TYPE $(, $t::TYPE)*];
        }
        impl<$h $(, $t)*> Split for ($h, $($t,)*) {
            type Head = $h;
            type Tail = ($($t,)*);
        }
    };
}
param_lists!();
param_lists!(A);
param_lists!(A, B);
param_lists!(A, B, C);
param_lists!(A, B, C, D);
param_lists!(A, B, C, D, E);
param_lists!(A, B, C, D, E, F);
param_lists!(A, B, C, D, E, F, G);
param_lists!(A, B, C, D, E, F, G, H);
