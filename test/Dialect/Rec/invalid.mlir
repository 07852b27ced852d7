// RUN: rkc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{scale must be a positive finite number, got -1}}
rec.recurrence @negative_scale scale -1.0 {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// expected-error @+1 {{parameter 'n' must be an integer, got 1.500000e+00 : f64}}
rec.recurrence @float_param params {n = 1.5} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// expected-error @+1 {{parameter 'n' must be a positive integer, got 0}}
rec.recurrence @zero_param params {n = 0} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @duplicate_input {
  // expected-note @+1 {{first declared here}}
  %q = rec.input "q" : !rec.key
  // expected-error @+1 {{input "q" is declared twice}}
  %q2 = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q2 : !rec.key
  }
}

// -----

rec.recurrence @reserved_name {
  // expected-error @+1 {{input name "initial_state" is reserved}}
  %q = rec.input "initial_state" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @empty_name {
  // expected-error @+1 {{input name must not be empty}}
  %q = rec.input "" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// expected-error @+1 {{has no 'rec.step': a recurrence must say how the state is updated}}
rec.recurrence @no_step {
  %q = rec.input "q" : !rec.key
}

// -----

rec.recurrence @two_steps {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
  // expected-error @+1 {{is a second step of @two_steps: a recurrence has exactly one 'rec.step'}}
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @op_after_step {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
  // expected-error @+1 {{follows the 'rec.step': the step must be the last operation of the recurrence}}
  %late = rec.input "late" : !rec.key
}

// -----

rec.recurrence @no_update {
  %q = rec.input "q" : !rec.key
  // expected-error @+1 {{never updates the state}}
  rec.step {
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @no_read {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{has no 'rec.read': a recurrence must produce an output}}
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
  }
}

// -----

rec.recurrence @two_reads {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
    // expected-error @+1 {{is a second read of the step: a step produces one output per token}}
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @read_before_update {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{must be the last operation of the step: the read comes after the update}}
    rec.read %q : !rec.key
    rec.write %q, %v : !rec.key, !rec.value
  }
}

// -----

rec.recurrence @substep_outside_repeat params {n = 2} {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key<substep>
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{operand #0 changes once per sub-step ('!rec.key<substep>') but is used outside a 'rec.repeat'}}
    rec.write %k, %v : !rec.key<substep>, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @unknown_count params {n = 2} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{count "m" is not a parameter of @unknown_count (parameters: n)}}
    rec.repeat "m" {
      rec.write %q, %v : !rec.key, !rec.value
    }
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @count_without_params {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{count "n" is not a parameter of @count_without_params (parameters: none)}}
    rec.repeat "n" {
      rec.write %q, %v : !rec.key, !rec.value
    }
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @empty_repeat params {n = 2} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    // expected-error @+1 {{has no factors to repeat}}
    rec.repeat "n" {
    }
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @nested_repeat params {n = 2} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.repeat "n" {
      // expected-error @+1 {{'rec.repeat' op expects parent op 'rec.step'}}
      rec.repeat "n" {
        rec.write %q, %v : !rec.key, !rec.value
      }
    }
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @read_in_repeat params {n = 2} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.repeat "n" {
      rec.write %q, %v : !rec.key, !rec.value
      // expected-error @+1 {{'rec.read' op expects parent op 'rec.step'}}
      rec.read %q : !rec.key
    }
  }
}

// -----

rec.recurrence @key_plus_value {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{'rec.add' op dimension mismatch: cannot combine a key-side vector (dk) with a value-side vector (dv)}}
  %x = rec.add %q, %v : !rec.key, !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @dot_mismatch {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{'rec.dot' op dimension mismatch: cannot combine a value-side vector (dv) with a key-side vector (dk)}}
  %x = rec.dot %v, %q : !rec.value, !rec.key
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @project_mismatch {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{'rec.project_out' op dimension mismatch}}
  %x = rec.project_out %q along %v : !rec.key, !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @dot_of_scalar {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  %s = rec.input "s" : !rec.scalar
  // expected-error @+1 {{'rec.dot' op operand #0 must be key- or value-side vector, but got '!rec.scalar'}}
  %x = rec.dot %s, %q : !rec.scalar, !rec.key
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @negative_eps {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{eps must be finite and non-negative, got -1}}
  %x = rec.l2norm %q {eps = -1.0 : f64} : !rec.key
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %x : !rec.key
  }
}

// -----

rec.recurrence @l2norm_of_scalar {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  %s = rec.input "s" : !rec.scalar
  // expected-error @+1 {{'rec.l2norm' op operand #0 must be key- or value-side vector, but got '!rec.scalar'}}
  %x = rec.l2norm %s : !rec.scalar
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @infinite_constant {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{value must be finite}}
  %c = rec.constant 0x7FF0000000000000
  rec.step {
    rec.write %q, %v scale %c : !rec.key, !rec.value, !rec.scalar<head>
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @scalar_as_address {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  %beta = rec.input "beta" : !rec.scalar
  rec.step {
    // expected-error @+1 {{'rec.erase' op operand #0 must be key-side vector (dk), but got '!rec.scalar'}}
    rec.erase %beta : !rec.scalar
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @value_as_key {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{'rec.delta' op operand #0 must be key-side vector (dk), but got '!rec.value'}}
    rec.delta %v, %v : !rec.value, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @value_gate {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{'rec.decay' op operand #0 must be log-space gate (scalar or per key channel), but got '!rec.value'}}
    rec.decay %v : !rec.value
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @vector_strength {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{'rec.write' op operand #2 must be scalar, but got '!rec.key'}}
    rec.write %q, %v scale %q : !rec.key, !rec.value, !rec.key
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @scalar_query {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  %s = rec.input "s" : !rec.scalar
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    // expected-error @+1 {{'rec.read' op operand #0 must be key-side vector (dk), but got '!rec.scalar'}}
    rec.read %s : !rec.scalar
  }
}

// -----

rec.recurrence @undefined_input {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{use of undeclared SSA value name}}
    rec.delta %k, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @expression_in_step {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{'rec.l2norm' op expects parent op 'rec.recurrence'}}
    %qn = rec.l2norm %q : !rec.key
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @factor_outside_step {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{'rec.write' op expects parent op to be one of 'rec.step, rec.repeat'}}
  rec.write %q, %v : !rec.key, !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// expected-error @+1 {{'rec.input' op expects parent op 'rec.recurrence'}}
%q = rec.input "q" : !rec.key

// -----

rec.recurrence @bad_rate {
  // expected-error @+2 {{expected one of [head, token, substep] for how often a spec value changes, got: often}}
  // expected-error @+1 {{failed to parse Rec_KeyType parameter 'rate'}}
  %q = rec.input "q" : !rec.key<often>
}
