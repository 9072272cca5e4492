//! JavaScript API.
