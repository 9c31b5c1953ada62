//! Layouts read from text hold their field names for the process's life: each distinct name
//! is kept once, and a process keeps at most 4,096 of them. Its own test binary: it fills
//! the process's table of names.

use idkit_snowflake::{ConfigError, LayoutSpec};

fn worker_name(spec: &LayoutSpec) -> &'static str {
    spec.worker_fields().next().unwrap().name
}

#[test]
fn names_are_kept_once_and_at_most_4096() {
    // The same layout read again (a custom layout per SQL call) takes no more memory.
    let a = LayoutSpec::parse("a", "time:41,node:10,sequence:12", 1, 0).unwrap();
    let b = LayoutSpec::parse("b", "time:41, node:10, sequence:12", 1, 0).unwrap();
    assert!(std::ptr::eq(worker_name(&a), worker_name(&b)));

    // Text that is not a layout keeps nothing: its names do not count.
    for i in 0..10_000 {
        let bad = format!("time:41,bad{i}:10,sequence");
        assert!(matches!(
            LayoutSpec::parse("bad", &bad, 1, 0),
            Err(ConfigError::FieldSyntax { .. })
        ));
    }
    // Nor does a layout that fails its checks (here: no time field), nor a name or a text
    // too long: a layout's names are kept only once the whole layout is good.
    for i in 0..10_000 {
        let bad = format!("stamp:41,bad{i}:10,sequence:12");
        assert!(matches!(
            LayoutSpec::parse("bad", &bad, 1, 0),
            Err(ConfigError::FieldWidth { .. } | ConfigError::TimeField { .. })
        ));
    }
    let long_name = format!("time:41,{}:10,sequence:12", "x".repeat(65));
    assert!(matches!(
        LayoutSpec::parse("long", &long_name, 1, 0),
        Err(ConfigError::FieldName { .. })
    ));
    let long_text = format!("time:41,a:10,sequence:12{}", " ".repeat(1_024));
    assert_eq!(
        LayoutSpec::parse("long", &long_text, 1, 0),
        Err(ConfigError::TextTooLong {
            bytes: long_text.len(),
            max: 1_024
        })
    );
    // A name repeated is still refused, checked before any name is kept.
    assert!(matches!(
        LayoutSpec::parse("twice", "time:41,a1:5,a1:5,sequence:12", 1, 0),
        Err(ConfigError::FieldName { .. })
    ));
    // 4,095 more distinct names fit ("node" is the first) ...
    for i in 1..4_096 {
        let fields = format!("time:41,n{i}:10,sequence:12");
        LayoutSpec::parse("n", &fields, 1, 0).unwrap();
    }
    // ... and the next is refused, while names already kept are still read.
    let refused = LayoutSpec::parse("n", "time:41,one_more:10,sequence:12", 1, 0);
    assert_eq!(
        refused.unwrap_err(),
        ConfigError::TooManyNames { max: 4_096 }
    );
    let again = LayoutSpec::parse("n", "time:41,n7:10,sequence:12", 1, 0).unwrap();
    assert_eq!(worker_name(&again), "n7");
}
