//! A request's form takes the focus once: the first time it is drawn in
//! this page's life, not each time the timeline draws it again.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

thread_local! {
    /// Requests that already took the focus once in this page's life.
    static FOCUSED: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

/// A form's `take_focus` that takes it the first time `id`'s form is
/// drawn in this page's life, not each time it is drawn again.
pub(super) fn focus_once(id: &str) -> Rc<dyn Fn() -> bool> {
    let id = id.to_owned();
    Rc::new(move || FOCUSED.with(|f| f.borrow_mut().insert(id.clone())))
}
