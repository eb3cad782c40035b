//! Reading JSON text into a type whose structs are JSON objects.
//!
//! serde_json reads a struct from an object or from an array of its fields
//! in order, so every derived reading carries both. lattice never writes a
//! struct as an array, and a reader of one is code the chat host ships for
//! nothing: about a third of each derived reading. [`from_str`] (and
//! [`from_value`]) reads every
//! struct, however deep, as an object only; otherwise it takes and refuses
//! what `serde_json::from_str` does.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

/// `serde_json::from_str`, with each struct read from an object only.
pub fn from_str<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, serde_json::Error> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Objects(&mut reader))?;
    reader.end()?;
    Ok(value)
}

/// `serde_json::from_value`, with each struct read from an object only.
pub fn from_value<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, serde_json::Error> {
    T::deserialize(Objects(value))
}

/// A deserializer that asks for a map where a struct is asked for, and
/// hands itself on to everything read inside.
struct Objects<D>(D);

/// A visitor whose nested readers are [`Objects`] too.
struct Wrap<V>(V);

struct Seed<S>(S);
struct Seq<A>(A);
struct Map<A>(A);
struct Enum<A>(A);
struct Variant<A>(A);

macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method(Wrap(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Objects<D> {
    type Error = D::Error;

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string deserialize_bytes
        deserialize_byte_buf deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Wrap(visitor))
    }

    // A newtype keeps its name: serde_json reads its raw values by it.
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Wrap(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Wrap(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, name: &'static str, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Wrap(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(self, _: &'static str, _: &'static [&'static str], visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Wrap(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(self, name: &'static str, variants: &'static [&'static str], visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Wrap(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! visit {
    ($($method:ident($t:ty))*) => {$(
        fn $method<E: de::Error>(self, v: $t) -> Result<V::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }

    visit! {
        visit_bool(bool) visit_i64(i64) visit_i128(i128) visit_u64(u64) visit_u128(u128) visit_f64(f64)
        visit_str(&str) visit_borrowed_str(&'de str) visit_string(String)
        visit_bytes(&[u8]) visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(Objects(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(Objects(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Seq(a))
    }

    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Map(a))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(Enum(a))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Objects(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Map<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Seed(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Enum<A> {
    type Error = A::Error;
    type Variant = Variant<A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant), A::Error> {
        self.0.variant_seed(Seed(seed)).map(|(value, variant)| (value, Variant(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Variant<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Seed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap(visitor))
    }

    // Read as a newtype whose content is a map, so that here too a struct
    // is an object only.
    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], visitor: V) -> Result<V::Value, A::Error> {
        self.0.newtype_variant_seed(Fields(visitor))
    }
}

/// A struct variant's fields, read as a map.
struct Fields<V>(V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for Fields<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_map(Wrap(self.0))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::Value;
    use serde_json::value::RawValue;

    use super::from_str;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Inner {
        n: u32,
        #[serde(default)]
        tags: Vec<String>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Shape {
        Dot,
        Circle(f64),
        Rect { w: u8, h: u8 },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Tagged {
        A { x: i64 },
        B,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Id(String);

    #[derive(Debug, PartialEq, Deserialize)]
    struct Outer {
        id: Id,
        inner: Inner,
        list: Vec<Inner>,
        maybe: Option<Inner>,
        shapes: Vec<Shape>,
        tagged: Tagged,
        pair: (u8, String),
        any: Value,
        #[serde(rename = "type")]
        kind: String,
    }

    /// What `serde_json::from_str` takes, this takes alike, at every depth.
    #[test]
    fn objects_read_as_serde_json_reads_them() {
        let text = r#"{"id":"x1","inner":{"n":1,"tags":["a","b\n"]},"list":[{"n":2},{"n":3,"tags":[]}],"maybe":null,
            "shapes":["dot",{"circle":1.5},{"rect":{"w":2,"h":3}}],"tagged":{"kind":"a","x":-4},"pair":[7,"seven"],
            "any":{"z":[1,{"y":null}],"a":true},"type":"t","unknown":[{"deep":1}]}"#;
        let ours: Outer = from_str(text).unwrap();
        assert_eq!(ours, serde_json::from_str::<Outer>(text).unwrap());
        assert_eq!(ours.shapes[2], Shape::Rect { w: 2, h: 3 });
        // Key order is kept, as serde_json keeps it here.
        assert_eq!(ours.any.as_object().unwrap().keys().collect::<Vec<_>>(), ["z", "a"]);
        assert_eq!(super::from_value::<Outer>(serde_json::from_str(text).unwrap()).unwrap(), ours);
        assert!(super::from_value::<Inner>(serde_json::json!([1, []])).is_err());
        let some = text.replace(r#""maybe":null"#, r#""maybe":{"n":9}"#);
        assert_eq!(from_str::<Outer>(&some).unwrap().maybe, Some(Inner { n: 9, tags: vec![] }));
    }

    /// A borrowed raw value is read as serde_json reads it: the text as sent.
    #[test]
    fn a_raw_value_is_the_text_as_sent() {
        #[derive(Deserialize)]
        struct Carrier<'a> {
            #[serde(borrow)]
            payload: &'a RawValue,
            after: u8,
        }
        let text = r#"{"payload": {"a" : [1, 2]} ,"after":1}"#;
        let read: Carrier = from_str(text).unwrap();
        assert_eq!((read.payload.get(), read.after), (r#"{"a" : [1, 2]}"#, 1));
    }

    /// A struct written as an array of its fields is refused, at the top
    /// and inside; so is everything serde_json refuses.
    #[test]
    fn a_struct_as_an_array_is_refused_and_so_is_bad_json() {
        assert!(serde_json::from_str::<Inner>(r#"[1, []]"#).is_ok(), "serde_json takes it");
        assert!(from_str::<Inner>(r#"[1, []]"#).is_err());
        assert!(from_str::<Vec<Inner>>(r#"[[1, []]]"#).is_err());
        assert!(from_str::<Shape>(r#"{"rect":[1,2]}"#).is_err());
        for bad in [r#"{"n":1"#, r#"{"n":1} x"#, r#"{"n":"1"}"#, r#"{"tags":[]}"#, r#"{"n":1,"n":2}"#, ""] {
            assert!(from_str::<Inner>(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<Inner>(bad).is_err(), "{bad}");
        }
        let error = from_str::<Inner>(r#"{"n":true}"#).unwrap_err().to_string();
        assert_eq!(error, serde_json::from_str::<Inner>(r#"{"n":true}"#).unwrap_err().to_string());
    }
}
