//! §4.3: the open document is taken once. A form asks for its arguments on every keystroke with
//! the same document; the host's document is read and checked by the typed §5.1 validator once,
//! and the outcome ([`DocumentCheck`]) is kept for the last document and found again by the host's
//! handles on it: its `documentVersion` when it gives one (the same version, and the same array
//! lengths, mean the same document even in a new object), else the object itself. The JavaScript
//! API keeps one [`LastDocument`] (`src/wasm/document.rs`, with the object compared by identity).

use super::validate::DocumentCheck;

/// The last document taken, by the host's handles on it: `O` its object (equal only to itself),
/// `V` its version.
#[derive(Debug)]
pub struct LastDocument<O, V> {
    taken: Option<Taken<O, V>>,
}

#[derive(Debug)]
struct Taken<O, V> {
    object: O,
    version: Option<V>,
    lengths: [f64; 2],
    check: DocumentCheck,
}

impl<O: PartialEq, V: PartialEq> LastDocument<O, V> {
    /// None taken yet.
    pub const fn new() -> Self {
        LastDocument { taken: None }
    }

    /// The kept check when `object` is the last document taken: with a `version`, the same
    /// version and the same `lengths` (the host's count of its elements and positions, −1 when
    /// absent: a cheap fingerprint); without one, the same object. On a find the object kept
    /// becomes `object` (a new object of the same version is found again by the next call).
    pub fn find(
        &mut self,
        object: &O,
        version: &Option<V>,
        lengths: [f64; 2],
    ) -> Option<DocumentCheck>
    where
        O: Clone,
    {
        let taken = self.taken.as_mut()?;
        let same = match version {
            None => taken.object == *object,
            Some(_) => taken.version == *version && taken.lengths == lengths,
        };
        if !same {
            return None;
        }
        taken.object = object.clone();
        Some(taken.check.clone())
    }

    /// Keeps `check` as the check of the document `object` (with `version` and `lengths`, as
    /// [`Self::find`] takes them), in place of the last one.
    pub fn keep(&mut self, object: O, version: Option<V>, lengths: [f64; 2], check: DocumentCheck) {
        self.taken = Some(Taken {
            object,
            version,
            lengths,
            check,
        });
    }
}

impl<O: PartialEq, V: PartialEq> Default for LastDocument<O, V> {
    fn default() -> Self {
        LastDocument::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host object, equal only to itself (as JavaScript compares objects): `(identity, atoms)`.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Object(u32);

    fn check(n_atoms: usize) -> DocumentCheck {
        DocumentCheck {
            n_atoms,
            cell: None,
            problem: None,
            keys: vec!["elements".into()],
        }
    }

    #[test]
    fn without_a_version_the_same_object_is_the_same_document() {
        let mut last: LastDocument<Object, f64> = LastDocument::new();
        assert_eq!(last.find(&Object(1), &None, [3.0, 9.0]), None);
        last.keep(Object(1), None, [3.0, 9.0], check(3));
        assert_eq!(last.find(&Object(1), &None, [3.0, 9.0]), Some(check(3)));
        // Grown in place: still the same object, still its first check (as the host promised).
        assert_eq!(last.find(&Object(1), &None, [4.0, 12.0]), Some(check(3)));
        // Another object with the same arrays is another document.
        assert_eq!(last.find(&Object(2), &None, [3.0, 9.0]), None);
        // A version given now, none kept: not the same.
        assert_eq!(last.find(&Object(1), &Some(1.0), [3.0, 9.0]), None);
    }

    #[test]
    fn with_a_version_the_same_version_and_lengths_are_the_same_document_in_any_object() {
        let mut last: LastDocument<Object, f64> = LastDocument::default();
        last.keep(Object(1), Some(7.0), [3.0, 9.0], check(3));
        assert_eq!(
            last.find(&Object(2), &Some(7.0), [3.0, 9.0]),
            Some(check(3))
        );
        // The object found is kept: without a version, the new object is the one.
        assert_eq!(last.find(&Object(2), &None, [3.0, 9.0]), Some(check(3)));
        assert_eq!(last.find(&Object(1), &None, [3.0, 9.0]), None);
        last.keep(Object(1), Some(7.0), [3.0, 9.0], check(3));
        // Another version, or other lengths under the same version: another document.
        assert_eq!(last.find(&Object(1), &Some(8.0), [3.0, 9.0]), None);
        assert_eq!(last.find(&Object(1), &Some(7.0), [4.0, 9.0]), None);
        assert_eq!(last.find(&Object(1), &Some(7.0), [3.0, -1.0]), None);
        // A version that is never equal to itself (NaN) never finds the document.
        last.keep(Object(1), Some(f64::NAN), [3.0, 9.0], check(3));
        assert_eq!(last.find(&Object(1), &Some(f64::NAN), [3.0, 9.0]), None);
        // Only the last document is kept.
        last.keep(Object(3), None, [1.0, 3.0], check(1));
        assert_eq!(last.find(&Object(1), &Some(7.0), [3.0, 9.0]), None);
        assert_eq!(last.find(&Object(3), &None, [1.0, 3.0]), Some(check(1)));
    }
}
